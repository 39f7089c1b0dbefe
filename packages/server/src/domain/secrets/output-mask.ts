/** What a secret value is replaced with in stored output. */
export const MASK = '***';

/** Masks secret values in a stream of text (one step's output), whatever the chunks it comes in. */
export interface OutputMask {
  /**
   * The text that can be stored now, its secrets masked. A tail that may be the start of a
   * secret split across chunks is held back until the next chunk tells.
   */
  push(text: string): string;
  /**
   * The end of the stream: what was held back, masked. A tail that is the start of a secret
   * (output cut at its limit in the middle of one) is masked too.
   */
  end(): string;
}

/**
 * The secrets to look for in output: each value, and each line of a value of several lines
 * (printed one by one, or with other line ends, they would escape the whole value's mask).
 */
export function secretsToMask(values: Iterable<string>): string[] {
  const found = new Set<string>();
  for (const value of values) {
    if (value !== '') found.add(value);
    if (!value.includes('\n')) continue;
    for (const line of value.split('\n')) {
      const trimmed = line.trim();
      if (trimmed !== '') found.add(trimmed);
    }
  }
  return [...found];
}

const UNMASKED: OutputMask = { push: (text) => text, end: () => '' };

interface Span {
  start: number;
  end: number;
}

/**
 * A mask for `secrets`: every occurrence of one is replaced by MASK, overlapping occurrences
 * by one. Without secrets, text passes as it is.
 */
export function createOutputMask(secrets: readonly string[]): OutputMask {
  const patterns = [...new Set(secrets.filter((s) => s !== ''))].map((secret) => ({
    secret,
    failure: prefixFunction(secret),
  }));
  if (patterns.length === 0) return UNMASKED;
  // Held back: at most the longest secret's length, less one.
  let held = '';
  // How many characters at the start of `held` belong to an occurrence masked already, its
  // mask stored: they are masked again, and without a second MASK.
  let continued = 0;

  /** Where the longest tail of `text` that is the start (not the whole) of a secret begins. */
  const partialStart = (text: string): number => {
    let start = text.length;
    for (const { secret, failure } of patterns) {
      start = Math.min(start, text.length - longestPrefixAtEnd(text, secret, failure));
    }
    return start;
  };

  /** The spans to mask in `text`: whole occurrences, and the rest of the one masked already. */
  const spans = (text: string): Span[] => {
    const found: Span[] = continued > 0 ? [{ start: 0, end: continued }] : [];
    for (const { secret } of patterns) {
      for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
        found.push({ start: at, end: at + secret.length });
      }
    }
    return found;
  };

  /** `text` with each run of overlapping spans replaced by one MASK (none for a continued one). */
  const render = (text: string, found: Span[]): string => {
    found.sort((a, b) => a.start - b.start);
    let out = '';
    let at = 0;
    for (const span of found) {
      if (span.end <= at) continue;
      if (span.start >= at) {
        out += text.slice(at, span.start);
        if (!(span.start === 0 && continued > 0)) out += MASK;
      }
      at = span.end;
    }
    return out + text.slice(at);
  };

  return {
    push(text) {
      const all = held + text;
      const found = spans(all);
      // Stored now: everything before a tail that may be the start of a secret.
      const cut = partialStart(all);
      if (cut === 0) {
        held = all;
        return '';
      }
      let crossing = 0;
      const before: Span[] = [];
      for (const span of found) {
        if (span.start >= cut) continue;
        before.push({ start: span.start, end: Math.min(span.end, cut) });
        crossing = Math.max(crossing, span.end - cut);
      }
      const out = render(all.slice(0, cut), before);
      held = all.slice(cut);
      continued = crossing;
      return out;
    },
    end() {
      const rest = held;
      const found = spans(rest);
      // The start of a secret at the very end: the output was cut in the middle of one.
      const cut = partialStart(rest);
      if (cut < rest.length) found.push({ start: cut, end: rest.length });
      const out = render(rest, found);
      held = '';
      continued = 0;
      return out;
    },
  };
}

/** Knuth-Morris-Pratt's table: for each prefix of `pattern`, its longest proper border. */
function prefixFunction(pattern: string): Int32Array {
  const table = new Int32Array(pattern.length);
  for (let i = 1, k = 0; i < pattern.length; i++) {
    while (k > 0 && pattern[i] !== pattern[k]) k = table[k - 1] ?? 0;
    if (pattern[i] === pattern[k]) k++;
    table[i] = k;
  }
  return table;
}

/**
 * The length of the longest tail of `text` that is a proper prefix of `pattern`, in time linear
 * in the pattern's length: only the last `pattern.length - 1` characters can hold one.
 */
function longestPrefixAtEnd(text: string, pattern: string, failure: Int32Array): number {
  let k = 0;
  for (let i = Math.max(0, text.length - pattern.length + 1); i < text.length; i++) {
    while (k > 0 && text[i] !== pattern[k]) k = failure[k - 1] ?? 0;
    if (text[i] === pattern[k]) k++;
    // A whole occurrence is not a partial one: go on as if it had failed at its last character.
    if (k === pattern.length) k = failure[k - 1] ?? 0;
  }
  return k;
}
