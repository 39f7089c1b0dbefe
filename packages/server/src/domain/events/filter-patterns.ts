import { RE2JS, RE2JSException } from 're2js';

// Trigger filters' regular expressions run on the server's main thread for every event, so
// they go through RE2 (re2js), whose matching takes time linear in the value, never
// backtracking. Linear is not small: the time is about the size of the compiled program
// times the length of the value, so both are bounded, as the spec says (TriggerFilter).

/** Longest pattern, in characters (also the spec's maxLength). */
export const MAX_PATTERN_LENGTH = 500;
/** Largest compiled program, in RE2 instructions: `x{n}` repeats the instructions of x n times. */
export const MAX_PATTERN_INSTRUCTIONS = 600;
/** Longest string value a pattern is matched on, in characters; longer ones never match. */
export const MAX_MATCHED_LENGTH = 4096;
/** How many compiled patterns are kept (the least recently used go first). */
export const PATTERN_CACHE_SIZE = 256;

export type CompiledPattern = { regex: RE2JS } | { problem: string };

const cache = new Map<string, CompiledPattern>();

/**
 * re2js exposes the program it compiled (`re2().prog`) without documenting it; the unit
 * tests of trigger filters hold this count to the repetitions it must refuse.
 */
const instructionsOf = (regex: RE2JS): number => (regex.re2().prog as { numInst(): number }).numInst();

function compile(pattern: string): CompiledPattern {
  const length = [...pattern].length;
  if (length > MAX_PATTERN_LENGTH) {
    return { problem: `must be at most ${MAX_PATTERN_LENGTH} characters long` };
  }
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    const detail = error.message.replace(/^error parsing regexp: /, '');
    return {
      problem: `must be a regular expression in RE2 syntax (no backreferences, no lookaround): ${detail}`,
    };
  }
  const instructions = instructionsOf(regex);
  if (instructions > MAX_PATTERN_INSTRUCTIONS) {
    return {
      problem:
        `is too large: it compiles to ${instructions} instructions, at most ${MAX_PATTERN_INSTRUCTIONS} ` +
        'are allowed (a repetition such as x{100} counts x 100 times)',
    };
  }
  return { regex };
}

/** The pattern compiled, or why it is refused; compiled once while it stays in the cache. */
export function compileFilterPattern(pattern: string): CompiledPattern {
  let compiled = cache.get(pattern);
  if (compiled) {
    cache.delete(pattern); // re-inserted below: the Map's order is the order of use
  } else {
    compiled = compile(pattern);
    if (cache.size >= PATTERN_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  cache.set(pattern, compiled);
  return compiled;
}

/** Whether `value` has more than `limit` characters (code points), counting no further. */
function longerThan(value: string, limit: number): boolean {
  if (value.length <= limit) return false; // a code point is one or two UTF-16 units
  let count = 0;
  for (const _ of value) {
    count += 1;
    if (count > limit) return true;
  }
  return false;
}

/** Whether the compiled pattern matches somewhere in `value`; values past the limit never match. */
export function patternMatches(regex: RE2JS, value: string): boolean {
  return !longerThan(value, MAX_MATCHED_LENGTH) && regex.test(value);
}
