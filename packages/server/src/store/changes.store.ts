import type { QueryBuilder } from './dialect.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

/** What a row of the change log says changed (migration 013). */
export type ChangeKind = 'pipeline' | 'task' | 'event' | 'output' | 'project' | 'access';

/** One committed change: `seq` numbers changes in commit order, without gaps. */
export interface Change {
  seq: number;
  /** Null for `access`, which concerns the organization `id`. */
  project_id: string | null;
  kind: ChangeKind;
  id: string;
}

/** The change log that triggers fill (migration 013), read in order and trimmed from its oldest end. */
export function createChangeStore(q: QueryBuilder, x: Executor) {
  const changes = q.selectFrom('changes');
  const latestSeq = prepared(0, () => changes.select((eb) => eb.fn.max('seq').as('seq')));
  const oldestSeq = prepared(0, () => changes.select((eb) => eb.fn.min('seq').as('seq')));
  const after = prepared(2, (seq: number, limit: number) =>
    changes.select(['seq', 'project_id', 'kind', 'id']).where('seq', '>', seq).orderBy('seq').limit(limit),
  );
  const deleteBelow = prepared(2, (below: number, limit: number) =>
    q
      .deleteFrom('changes')
      .where('seq', 'in', (eb) =>
        eb.selectFrom('changes').select('seq').where('seq', '<', below).orderBy('seq').limit(limit),
      ),
  );
  const latest = async () => (await x.first(latestSeq()))?.seq ?? null;
  const oldest = async () => (await x.first(oldestSeq()))?.seq ?? null;

  /** The oldest number kept when the latest `keep` changes are: never the newest, so that no number is given twice. */
  const keptFrom = async (keep: number) => ((await latest()) ?? 0) - Math.max(1, keep) + 1;

  return {
    /** Changes committed after `seq`, oldest first, at most `limit`. */
    async after(seq: number, limit: number): Promise<Change[]> {
      return (await x.all(after(seq, limit))) as Change[];
    },
    /** The number of the latest change committed; 0 before the first. */
    async latest(): Promise<number> {
      return (await latest()) ?? 0;
    },
    /** The number of the oldest change kept, undefined before the first. */
    async oldest(): Promise<number | undefined> {
      return (await oldest()) ?? undefined;
    },
    /** How many changes are kept beyond the latest `keep`. */
    async beyond(keep: number): Promise<number> {
      const first = await oldest();
      return first === null ? 0 : Math.max(0, (await keptFrom(keep)) - first);
    },
    /** Deletes at most `limit` of the oldest changes beyond the latest `keep`; returns how many. */
    async deleteBeyond(keep: number, limit: number): Promise<number> {
      const below = await keptFrom(keep);
      const { changes: deleted } = await x.run(deleteBelow(below, limit));
      return deleted;
    },
  };
}
