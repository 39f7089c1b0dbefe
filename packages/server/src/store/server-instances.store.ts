import { sql } from 'kysely';
import type { Dialect } from './dialect.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

/**
 * The leases of the server instances on the database (migration 020), timed by the database's
 * clock: a lease is held until `expires_at`, and renewed before then by the instance that holds it.
 */
export function createServerInstanceStore(d: Dialect, x: Executor) {
  const { q } = d;
  const expiry = (leaseMs: number) => sql<number>`${d.clockMs} + ${leaseMs}`;
  const register = prepared(2, (id: string, leaseMs: number) =>
    q
      .insertInto('server_instances')
      .values({ id, expires_at: expiry(leaseMs) })
      .onConflict((oc) => oc.column('id').doUpdateSet({ expires_at: expiry(leaseMs) })),
  );
  const renew = prepared(2, (id: string, leaseMs: number) =>
    q
      .updateTable('server_instances')
      .set({ expires_at: expiry(leaseMs) })
      .where('id', '=', id),
  );
  const expired = prepared(0, () =>
    q.selectFrom('server_instances').select('id').where('expires_at', '<', d.clockMs).orderBy('id'),
  );
  const removeExpired = prepared(1, (id: string) =>
    q.deleteFrom('server_instances').where('id', '=', id).where('expires_at', '<', d.clockMs),
  );
  const remove = prepared(1, (id: string) => q.deleteFrom('server_instances').where('id', '=', id));

  return {
    /** Takes the lease of instance `id` for `leaseMs` from now, whether or not it had one. */
    async register(id: string, leaseMs: number): Promise<void> {
      await x.run(register(id, leaseMs));
    },
    /** Extends the lease of `id` to `leaseMs` from now; false if it has none (another ended it). */
    async renew(id: string, leaseMs: number): Promise<boolean> {
      return (await x.run(renew(id, leaseMs))).changes === 1;
    },
    /** The instances whose leases have expired. */
    async expired(): Promise<string[]> {
      return (await x.all(expired())).map((row) => row.id);
    },
    /** Ends the lease of `id` if it has expired; false if it has not, or is gone (another ended it). */
    async removeExpired(id: string): Promise<boolean> {
      return (await x.run(removeExpired(id))).changes === 1;
    },
    /** Ends the lease of `id`, expired or not. */
    async remove(id: string): Promise<void> {
      await x.run(remove(id));
    },
  };
}
