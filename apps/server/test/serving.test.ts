import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { promisify } from 'node:util';
import { ApiError, getScratchpadEntry } from '@pipewright/client';
import { certificateFile, clientOf, lastLine, type RunningProgram, tempDirs } from '@pipewright/testing';
import { describe, expect, it } from 'vitest';
import { eventually, programStarter } from './program.js';

// How the program serves HTTP while it runs and while it stops, through its real process.

const tempDir = tempDirs({ forTasks: true });
const start = programStarter();

/** One kept-alive TLS connection to `server`, on which the test writes requests as bytes. */
function openConnection(server: RunningProgram, ca: string) {
  const { hostname, port } = new URL(server.url);
  const socket = connect({ host: hostname, port: Number(port), ca });
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk;
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.once('error', () => undefined);
  return {
    /** Sends a GET; resolves with what came back once `done` holds for everything received. */
    async get(path: string, apiKey: string, done: (received: string) => boolean) {
      const from = received.length;
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
      await eventually(() => (done(received.slice(from)) ? true : undefined));
      return received.slice(from);
    },
    closed,
    destroy: () => socket.destroy(),
  };
}

describe('a server stopping on SIGTERM', () => {
  it('answers 503 and closes, on open and new connections, serves its running tasks, and is waited for by a server started meanwhile', async () => {
    const dataDir = tempDir('pipewright-serving-');
    const shared = tempDir('pipewright-serving-shared-');
    // The task must outlast all that the test does during the stop, however slow the machine: a
    // stop deadline that only bounds a broken run.
    const first = await start(dataDir, ['--stop-deadline', '600']);
    const apiKey = lastLine(first.stdout());
    const ca = readFileSync(certificateFile(dataDir), 'utf8');
    const admin = clientOf(first, dataDir, apiKey);

    // A task that runs until the test opens its gate, then writes the scratchpad through the
    // API with its own key: while the server stops.
    const gated = [
      'touch "$DIR/started"',
      'i=0; while [ ! -e "$DIR/open" ]; do i=$((i+1)); [ "$i" -gt 2400 ] && exit 7; sleep 0.05; done',
      'curl -sS --fail -X PUT -H "Authorization: Bearer $PIPEWRIGHT_API_KEY"' +
        ' -H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" --data-binary during-stop' +
        ' "$PIPEWRIGHT_API_URL/v0/pipelines/id/$PIPEWRIGHT_PIPELINE_ID/scratchpad/key/written"',
    ].join('\n');
    const { data: project } = await admin.POST('/projects', { body: { name: `p-${Date.now()}` } });
    const projectId = project?.id ?? '';
    await admin.PUT('/projects/id/{id}/resources', {
      params: { path: { id: projectId } },
      body: {
        specs: [
          {
            type: 'task',
            version: 1,
            name: 'gated',
            data: { environment: { DIR: shared }, steps: [{ code: gated }] },
          },
          { type: 'pipeline', version: 1, name: 'main', data: { tasks: [{ task: 'gated' }] } },
          { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['main'] } },
        ],
      },
    });
    const client = clientOf(first, dataDir, apiKey, projectId);
    const { data: go } = await client.GET('/resources/type/{type}/name/{name}', {
      params: { path: { type: 'command', name: 'go' } },
    });
    const { data: execution } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: go?.id ?? '' } },
      body: {},
    });
    const pipelineId = execution?.pipeline_ids[0] ?? '';
    await eventually(() => (existsSync(join(shared, 'started')) ? true : undefined));

    const connection = openConnection(first, ca);
    try {
      const before = await connection.get('/v0/status', apiKey, (text) => text.endsWith('\r\n\r\n{}'));
      expect(before).toMatch(/^HTTP\/1\.1 200 /);

      const exited = first.stop('SIGTERM');
      await eventually(() => (first.stderr().includes('waiting for running tasks') ? true : undefined));
      // The connection opened before the stop: 503, then the server closes it.
      const during = await connection.get('/v0/status', apiKey, (text) => text.includes('}'));
      expect(during).toMatch(/^HTTP\/1\.1 503 /);
      expect(during).toMatch(/\r\nConnection: close\r\n/i);
      expect(during).toContain('"code":"service_unavailable"');
      await connection.closed;
      // A new connection is still accepted, and answered the same.
      const refused = await admin.GET('/status').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect((refused as ApiError).headers.get('connection')).toBe('close');

      // Started meanwhile, the next server waits for this one instead of refusing.
      let waiting = false;
      const next = start(dataDir, [], (stderr) => {
        waiting ||= stderr.includes('waiting for the server stopping on the data directory');
      });
      await eventually(() => (waiting ? true : undefined));
      expect(first.process.exitCode).toBeNull();

      writeFileSync(join(shared, 'open'), '');
      expect(await exited).toBe(0);
      const second = await next;
      const again = clientOf(second, dataDir, apiKey, projectId);
      const pipeline = await eventually(async () => {
        const { data } = await again.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } });
        return data?.status === 'started' || data?.status === 'created' ? undefined : data;
      });
      // The task's own request during the stop was served: it wrote the scratchpad, and succeeded.
      expect(pipeline?.status).toBe('successful');
      expect(await getScratchpadEntry(again, pipelineId, 'written')).toBe('during-stop');
      await second.stop();
    } finally {
      connection.destroy();
    }
  });
});

describe('HTTPS', () => {
  it('serves clients that ask for HTTP/1.0 in the TLS handshake (curl --http1.0)', async () => {
    const dataDir = tempDir('pipewright-serving-');
    const server = await start(dataDir);
    const apiKey = lastLine(server.stdout());
    const caFile = certificateFile(dataDir);
    const { stdout } = await promisify(execFile)(
      'curl',
      [
        '-sS',
        '-i',
        '--http1.0',
        '--max-time',
        '60',
        '--cacert',
        caFile,
        '-H',
        `Authorization: Bearer ${apiKey}`,
        `${server.url}/status`,
      ],
      { timeout: 90_000 },
    );
    expect(stdout).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(stdout).toMatch(/\r\nContent-Type: application\/json\r\n/);
    expect(stdout.endsWith('\r\n\r\n{}')).toBe(true);
    expect(await server.stop()).toBe(0);
  });
});
