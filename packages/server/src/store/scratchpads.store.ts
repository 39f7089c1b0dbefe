import type { Dialect } from './dialect.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

export function createScratchpadStore(d: Dialect, x: Executor) {
  const { q } = d;
  const entries = q.selectFrom('scratchpad_entries');
  const all = prepared(1, (pipelineId: string) =>
    entries.select(['key', 'value']).where('pipeline_id', '=', pipelineId).orderBy('key'),
  );
  const one = prepared(2, (pipelineId: string, key: string) =>
    entries.select('value').where('pipeline_id', '=', pipelineId).where('key', '=', key),
  );
  const size = prepared(1, (pipelineId: string) =>
    entries.select((eb) => eb.fn.countAll<number>().as('n')).where('pipeline_id', '=', pipelineId),
  );
  // Bytes of UTF-8, the database's encoding.
  const bytes = prepared(1, (pipelineId: string) =>
    entries
      .select((eb) => {
        const bytesOf = (column: 'key' | 'value') => d.byteLength(eb.ref(column));
        return eb.fn
          .coalesce(eb.fn.sum<number>(eb(bytesOf('key'), '+', bytesOf('value'))), eb.lit(0))
          .as('n');
      })
      .where('pipeline_id', '=', pipelineId),
  );
  const set = prepared(3, (pipelineId: string, key: string, value: string) =>
    q
      .insertInto('scratchpad_entries')
      .values({ pipeline_id: pipelineId, key, value })
      .onConflict((oc) =>
        oc.columns(['pipeline_id', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })),
      ),
  );
  const remove = prepared(2, (pipelineId: string, key: string) =>
    q.deleteFrom('scratchpad_entries').where('pipeline_id', '=', pipelineId).where('key', '=', key),
  );
  const clear = prepared(1, (pipelineId: string) =>
    q.deleteFrom('scratchpad_entries').where('pipeline_id', '=', pipelineId),
  );
  return {
    async entries(pipelineId: string): Promise<Record<string, string>> {
      const rows = await x.all(all(pipelineId));
      return Object.fromEntries(rows.map((row) => [row.key, row.value]));
    },
    async get(pipelineId: string, key: string): Promise<string | undefined> {
      const row = await x.first(one(pipelineId, key));
      return row?.value;
    },
    async size(pipelineId: string): Promise<number> {
      const row = await x.first(size(pipelineId));
      return row?.n ?? 0;
    },
    /** The bytes of every key and value of the scratchpad, in UTF-8. */
    async bytes(pipelineId: string): Promise<number> {
      const row = await x.first(bytes(pipelineId));
      return row?.n ?? 0;
    },
    async set(pipelineId: string, key: string, value: string): Promise<void> {
      await x.run(set(pipelineId, key, value));
    },
    /** Returns false when there was no such entry. */
    async delete(pipelineId: string, key: string): Promise<boolean> {
      const { changes } = await x.run(remove(pipelineId, key));
      return changes === 1;
    },
    async clear(pipelineId: string): Promise<void> {
      await x.run(clear(pipelineId));
    },
  };
}
