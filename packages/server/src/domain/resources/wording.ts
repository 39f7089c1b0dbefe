// Small pieces of the sentences validation errors are made of.

/** `a`, `a or b`, `a, b or c`. */
export function list(words: readonly string[], conjunction: 'or' | 'and' = 'or'): string {
  const last = words.at(-1) ?? '';
  return words.length < 2 ? last : `${words.slice(0, -1).join(', ')} ${conjunction} ${last}`;
}

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`: JSON values as a reader sees them. */
export function quotedList(values: readonly unknown[], conjunction: 'or' | 'and' = 'or'): string {
  return list(
    values.map((value) => JSON.stringify(value)),
    conjunction,
  );
}

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** Says which known name an unknown one was probably meant to be. */
export type Suggest = (name: string, candidates: Iterable<string>) => string;

/**
 * A Suggest that compares at most `budget` pairs of names over its life: one validation of
 * a set full of unknown names must still answer at once; past the budget it suggests nothing.
 * It answers ` (did you mean "build"?)` when a candidate is a likely typo, else nothing.
 */
export function createSuggest(budget = 10_000): Suggest {
  let left = budget;
  return (name, candidates) => {
    // A third of the name: "biuld" may be "build", but "b" is not "a".
    const tolerance = Math.floor(name.length / 3);
    let best: { candidate: string; distance: number } | undefined;
    for (const candidate of candidates) {
      if (left <= 0) break;
      left -= 1;
      if (Math.abs(candidate.length - name.length) > tolerance) continue;
      const distance = editDistance(name, candidate);
      if (distance <= tolerance && (!best || distance < best.distance)) best = { candidate, distance };
    }
    return best ? ` (did you mean ${JSON.stringify(best.candidate)}?)` : '';
  };
}
