import type { Db } from './db.js';

export function createScratchpadStore(db: Db) {
  const all = db.prepare<[string], { key: string; value: string }>(
    'SELECT key, value FROM scratchpad_entries WHERE pipeline_id = ? ORDER BY key',
  );
  const one = db.prepare<[string, string], { value: string }>(
    'SELECT value FROM scratchpad_entries WHERE pipeline_id = ? AND key = ?',
  );
  const count = db.prepare<[string], { n: number }>(
    'SELECT count(*) AS n FROM scratchpad_entries WHERE pipeline_id = ?',
  );
  // Bytes of UTF-8 (the database's encoding): a text cast to a blob keeps its bytes.
  const bytes = db.prepare<[string], { n: number }>(
    `SELECT coalesce(sum(length(CAST(key AS BLOB)) + length(CAST(value AS BLOB))), 0) AS n
     FROM scratchpad_entries WHERE pipeline_id = ?`,
  );
  const upsert = db.prepare(
    `INSERT INTO scratchpad_entries (pipeline_id, key, value) VALUES (?, ?, ?)
     ON CONFLICT (pipeline_id, key) DO UPDATE SET value = excluded.value`,
  );
  const remove = db.prepare('DELETE FROM scratchpad_entries WHERE pipeline_id = ? AND key = ?');
  const clear = db.prepare('DELETE FROM scratchpad_entries WHERE pipeline_id = ?');
  return {
    entries(pipelineId: string): Record<string, string> {
      return Object.fromEntries(all.all(pipelineId).map((row) => [row.key, row.value]));
    },
    get(pipelineId: string, key: string): string | undefined {
      return one.get(pipelineId, key)?.value;
    },
    size(pipelineId: string): number {
      return count.get(pipelineId)?.n ?? 0;
    },
    /** The bytes of every key and value of the scratchpad, in UTF-8. */
    bytes(pipelineId: string): number {
      return bytes.get(pipelineId)?.n ?? 0;
    },
    set(pipelineId: string, key: string, value: string): void {
      upsert.run(pipelineId, key, value);
    },
    /** Returns false when there was no such entry. */
    delete(pipelineId: string, key: string): boolean {
      return remove.run(pipelineId, key).changes === 1;
    },
    clear(pipelineId: string): void {
      clear.run(pipelineId);
    },
  };
}
