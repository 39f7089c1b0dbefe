import type { ApiClient } from '@pipewright/client';
import { one, pollMs, viewOf } from './database.js';
import { type Pipewright, until } from './pipewright.js';

/**
 * Executes command `commandId` of `client`'s project on `server`, and waits for its first
 * pipeline to succeed, read in the server's database every 2 ms (10 ms on PostgreSQL, see
 * pollMs): its end is seen at once. Resolves to the milliseconds from the request to that end.
 */
export async function executeAndWait(
  server: Pipewright,
  client: ApiClient,
  commandId: string,
): Promise<number> {
  const db = viewOf(server);
  const status = (id: string) => one<{ status: string }>(db, 'SELECT status FROM pipelines WHERE id = ?', id);
  try {
    const started = performance.now();
    const { data } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: commandId } },
      body: {},
    });
    const id = data?.pipeline_ids[0] ?? '';
    await until(async () => (await status(id))?.status === 'successful', 600_000, pollMs(server, 2));
    return performance.now() - started;
  } finally {
    await db.close();
  }
}
