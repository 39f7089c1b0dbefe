import type { Db } from './db.js';

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
export function createChangeStore(db: Db) {
  const after = db.prepare<{ after: number; limit: number }, Change>(
    'SELECT seq, project_id, kind, id FROM changes WHERE seq > @after ORDER BY seq LIMIT @limit',
  );
  const latest = db.prepare<[], number | null>('SELECT max(seq) FROM changes').pluck();
  const oldest = db.prepare<[], number | null>('SELECT min(seq) FROM changes').pluck();
  const deleteBelow = db.prepare<{ below: number; limit: number }>(
    `DELETE FROM changes WHERE seq IN (SELECT seq FROM changes WHERE seq < @below ORDER BY seq LIMIT @limit)`,
  );

  /** The oldest number kept when the latest `keep` changes are: never the newest, so that no number is given twice. */
  const keptFrom = (keep: number) => (latest.get() ?? 0) - Math.max(1, keep) + 1;

  return {
    /** Changes committed after `seq`, oldest first, at most `limit`. */
    after(seq: number, limit: number): Change[] {
      return after.all({ after: seq, limit });
    },
    /** The number of the latest change committed; 0 before the first. */
    latest(): number {
      return latest.get() ?? 0;
    },
    /** The number of the oldest change kept, undefined before the first. */
    oldest(): number | undefined {
      return oldest.get() ?? undefined;
    },
    /** How many changes are kept beyond the latest `keep`. */
    beyond(keep: number): number {
      const first = oldest.get();
      return first === null || first === undefined ? 0 : Math.max(0, keptFrom(keep) - first);
    },
    /** Deletes at most `limit` of the oldest changes beyond the latest `keep`; returns how many. */
    deleteBeyond(keep: number, limit: number): number {
      return deleteBelow.run({ below: keptFrom(keep), limit }).changes;
    },
  };
}
