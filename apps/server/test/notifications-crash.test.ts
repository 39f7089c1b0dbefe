import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiClient, Schemas } from '@pipewright/client';
import { clientOf, lastLine, tempDirs } from '@pipewright/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, programStarter } from './program.js';

// Notifications are durable: SIGKILL between the attempts of a delivery loses neither it nor
// its attempts, and the next start carries on with it.

const tempDir = tempDirs({ forTasks: true });
const startProgram = programStarter();
const start = (dataDir: string) => startProgram(dataDir, ['--notification-retry-delay', '1']);

/** A webhook receiver on 127.0.0.1 that answers 500 until it is `up`. */
const receiver = { up: false, posts: [] as IncomingHttpHeaders[], url: '' };
const http = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    receiver.posts.push(req.headers);
    res.writeHead(receiver.up ? 200 : 500).end();
  });
});
beforeAll(async () => {
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});

async function deliveries(client: ApiClient): Promise<Schemas['NotificationDelivery'][]> {
  return (await client.GET('/notification_deliveries', {})).data?.elements ?? [];
}

describe('notifications across a crash', () => {
  it('keeps a pending delivery and its attempts through SIGKILL, and delivers it after the next start', async () => {
    const dataDir = tempDir('pipewright-notify-crash-');
    const first = await start(dataDir);
    const apiKey = lastLine(first.stdout());
    const admin = clientOf(first, dataDir, apiKey);
    const { data: project } = await admin.POST('/projects', { body: { name: 'notified' } });
    await admin.PUT('/projects/id/{id}/resources', {
      params: { path: { id: project?.id ?? '' } },
      body: {
        specs: [
          { type: 'task', version: 1, name: 'fail', data: { steps: [{ code: 'exit 1' }] } },
          {
            type: 'pipeline',
            version: 1,
            name: 'main',
            data: { tasks: [{ task: 'fail' }], notifications: [{ webhook: { url: receiver.url } }] },
          },
          { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['main'] } },
        ],
      },
    });
    const client = clientOf(first, dataDir, apiKey, project?.id);
    const { data: go } = await client.GET('/resources/type/{type}/name/{name}', {
      params: { path: { type: 'command', name: 'go' } },
    });
    await client.POST('/commands/id/{id}/execute', { params: { path: { id: go?.id ?? '' } }, body: {} });

    // The receiver refuses the first attempt; the server dies while the delivery waits for its next.
    const [before] = await eventually(async () => {
      const found = await deliveries(client);
      return found[0] && found[0].attempts.length > 0 ? found : undefined;
    });
    expect(await first.stop('SIGKILL')).toBeNull();
    expect(before).toMatchObject({ status: 'pending' });
    receiver.up = true;

    const second = await start(dataDir);
    const again = clientOf(second, dataDir, apiKey, project?.id);
    // Within the next retry delays, or the lease of a claim (60 s) if the kill came mid-attempt.
    const [after] = await eventually(async () => {
      const found = await deliveries(again);
      return found[0]?.status === 'delivered' ? found : undefined;
    }, 120_000);
    const attempts = after?.attempts ?? [];
    // Every attempt recorded before the crash is still there, and the last one succeeded.
    expect(attempts.slice(0, before?.attempts.length)).toEqual(before?.attempts);
    expect(attempts.at(-1)).toMatchObject({ succeeded: true, status_code: 200 });
    expect(attempts.slice(0, -1).every((attempt) => attempt.status_code === 500)).toBe(true);
    expect(new Set(receiver.posts.map((headers) => headers['x-pipewright-delivery']))).toEqual(
      new Set([after?.id]),
    );
    await second.stop();
  });
});
