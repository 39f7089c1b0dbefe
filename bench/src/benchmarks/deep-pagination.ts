import { type BigData, EVENT_COUNT } from '../lib/big-data.js';
import type { Context, Row } from '../lib/context.js';
import { one, viewOf } from '../lib/database.js';
import { alternate, median } from '../lib/stats.js';

const PAGE = 100;

/** 5. The last page of 1,000,000 events against the first, and against OFFSET. */
export async function deepPagination(context: Context, big: BigData): Promise<Row[]> {
  const { server, projectId } = big;
  const headers = { authorization: `Bearer ${server.apiKey}`, 'x-service-project-id': projectId };
  const rows: Row[] = [];
  for (const sort of ['id', 'event_time']) {
    // The key of an element near the end: keys carry a position, not an order, so the
    // `next` key of the first descending page opens the last ascending one.
    const tail = await fetch(`${server.baseUrl}/v0/events?size=${PAGE}&sort=${sort}&order=desc`, { headers });
    const after = ((await tail.json()) as { next: { after: string } }).next.after;
    const time = (query: string) => async () => {
      const started = performance.now();
      const response = await fetch(`${server.baseUrl}/v0/events?size=${PAGE}&sort=${sort}${query}`, {
        headers,
      });
      const page = (await response.json()) as { elements: unknown[] };
      if (page.elements.length === 0) throw new Error('empty page');
      return performance.now() - started;
    };
    context.log(`sort ${sort}: first and last pages, alternating`);
    const samples = await alternate(context.quick ? 10 : 50, {
      first: time(''),
      deep: time(`&after=${after}`),
    });
    const [first, deep] = [median(samples.first), median(samples.deep)];
    rows.push({
      benchmark: 'pagination',
      metric: `GET /v0/events sort=${sort}: last page of ${EVENT_COUNT.toLocaleString('en')} vs first page`,
      ours: deep,
      baseline: first,
      baselineName: 'first page',
      ratio: deep / first,
      unit: 'ms',
      goal: 'ratio <= 1.5',
      met: deep / first <= 1.5,
    });
  }

  // The same deep page in SQL, on the server's database: our keyset query against LIMIT/OFFSET.
  const db = viewOf(server);
  const lastIds = await one<{ id: string }>(
    db,
    'SELECT id FROM events WHERE project_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
    projectId,
    PAGE,
  );
  const keyset = `SELECT * FROM events WHERE project_id = ? AND id > ? ORDER BY id LIMIT ${PAGE + 1}`;
  const offset = `SELECT * FROM events WHERE project_id = ? ORDER BY id LIMIT ${PAGE} OFFSET ?`;
  const timeSql =
    (sql: string, ...params: unknown[]) =>
    async () => {
      const started = performance.now();
      await db.all(sql, ...params);
      return performance.now() - started;
    };
  const sql = await alternate(context.quick ? 5 : 20, {
    keyset: timeSql(keyset, projectId, lastIds?.id),
    offset: timeSql(offset, projectId, EVENT_COUNT - PAGE),
  });
  await db.close();
  const [k, o] = [median(sql.keyset), median(sql.offset)];
  rows.push({
    benchmark: 'pagination',
    metric: 'the last page in SQL: keyset query vs LIMIT/OFFSET',
    ours: k,
    baseline: o,
    baselineName: 'OFFSET',
    ratio: k / o,
    unit: 'ms',
  });
  return rows;
}
