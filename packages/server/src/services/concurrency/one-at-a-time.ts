/**
 * Runs jobs of the same key one after another, in the order they were asked for, while jobs
 * of other keys run meanwhile. A job that fails does not stop those queued behind it.
 */
export function oneAtATimePerKey() {
  const tails = new Map<string, Promise<unknown>>();
  return function run<T>(key: string, job: () => Promise<T>): Promise<T> {
    const result = (tails.get(key) ?? Promise.resolve()).then(job);
    const tail = result.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return result;
  };
}
