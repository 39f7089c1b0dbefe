/** How long an entry is kept at most, even in a database nothing writes to. */
const TTL_MS = 10_000;
/** Entries kept at most: past it, the oldest goes first. */
const MAX_ENTRIES = 1_000;

/**
 * What a key id resolved to (its owner row), remembered so that a busy key costs no join per
 * request. It is trusted only while the database is unchanged: a different `changeStamp`
 * (any commit, by the API's connection or another: the scheduler ending a task, an admin
 * command, a test writing to the store) empties it before the next lookup, so a revoked key,
 * a disabled account or an ended task is refused on the very next request. Callers still
 * check the secret and the row's flags on every request; only the read is saved.
 */
export function createKeyOwnerCache<T>(changeStamp: () => string, now: () => number = Date.now) {
  const entries = new Map<string, { owner: T; expires: number }>();
  let stamp: string | undefined;
  return {
    /** The owner of key `id`, from the cache while nothing changed, else from `load`. */
    async resolve(id: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
      // The stamp is read before `load`: a commit landing in between makes the next stamp
      // differ, so what `load` read is never kept past a change it may have missed.
      const current = changeStamp();
      if (current !== stamp) {
        entries.clear();
        stamp = current;
      }
      const time = now();
      const cached = entries.get(id);
      if (cached && cached.expires > time) return cached.owner;
      const owner = await load();
      entries.delete(id);
      if (owner === undefined) return undefined;
      // Another lookup, made while `load` ran, saw a newer stamp: what `load` read may predate it.
      if (stamp !== current) return owner;
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(id, { owner, expires: time + TTL_MS });
      return owner;
    },
  };
}
