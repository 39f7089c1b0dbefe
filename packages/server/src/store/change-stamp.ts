import type { Db } from './db.js';

/**
 * A stamp that differs whenever something may have been committed to the database since
 * the last one: by this connection (`total_changes()` counts the rows it wrote) or by any
 * other, of this process or another (`PRAGMA data_version` moves when another connection
 * commits). Caches compare it before trusting what they read earlier; it costs a fraction
 * of the reads it saves.
 */
export function createChangeStamp(db: Db): () => string {
  const othersCommits = db.prepare<[], number>('PRAGMA data_version').pluck();
  const ownChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
  return () => `${othersCommits.get()}:${ownChanges.get()}`;
}
