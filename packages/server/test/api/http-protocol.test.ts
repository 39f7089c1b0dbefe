import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { sharedTestServer, uniqueName } from '../helpers/test-server.js';
import { OPERATIONS } from '../reliability/spec.js';
import { buildWorld, validRequest, type World } from '../reliability/world.js';

// HTTP as clients other than Node's fetch meet it (RFC 9110, RFC 9112): Python's http.client
// and urllib3, curl, and raw bytes where only they can say it (pipelining, HTTP/1.0).

const PYTHON_DIR = fileURLToPath(new URL('../python/', import.meta.url));
// Debian's Python, whose urllib3 the test command installs (python3-urllib3): another python3
// earlier in PATH may have none.
const PYTHON = '/usr/bin/python3';
const RUN_TIMEOUT_MS = 90_000;

/** Every request log line of the server, to find a request's by its X-Request-Id. */
const logged: Record<string, unknown>[] = [];
const capture = (message: string, fields?: Record<string, unknown>) => {
  if (message === 'request' && fields) logged.push(fields);
};
const logger: Logger = { debug: capture, info: capture, warn: capture, error: capture };

const server = sharedTestServer({ logger });
let world: World;
let caFile: string;
let origin: string;
beforeAll(async () => {
  caFile = join(server.tempDir(), 'ca.pem');
  writeFileSync(caFile, server.ca);
  origin = server.baseUrl;
  world = await buildWorld(server, server.adminKey);
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection after this answer. */
  closed: boolean;
}

interface PythonRequest {
  method: string;
  target: string;
  headers?: [string, string][];
  body?: string;
  chunks?: string[];
  /** False: no Host header at all. */
  host?: boolean;
}

/** Runs a script of test/python with Debian's `python3`, standard input given, bounded in time. */
function python(
  script: string,
  args: string[],
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(PYTHON, [join(PYTHON_DIR, script), ...args], { timeout: RUN_TIMEOUT_MS });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Sends `requests` one after the other on one connection of Python's http.client. */
async function httpClient(requests: PythonRequest[]): Promise<Answer[]> {
  const run = await python('http_client.py', [], JSON.stringify({ base: origin, ca: caFile, requests }));
  if (run.code !== 0) throw new Error(`http_client.py exited ${run.code}: ${run.stderr}`);
  const answers = JSON.parse(run.stdout) as (Omit<Answer, 'headers'> & { headers: [string, string][] })[];
  return answers.map((answer) => ({
    ...answer,
    headers: Object.fromEntries(answer.headers.map(([name, value]) => [name.toLowerCase(), value])),
  }));
}

/** Runs curl with the server's certificate; returns each response head it printed, and the body. */
async function curl(args: string[]) {
  const { stdout } = await promisify(execFile)(
    'curl',
    ['-sS', '-i', '--max-time', '20', '--cacert', caFile, ...args],
    { timeout: RUN_TIMEOUT_MS },
  );
  const heads: { status: number; headers: Record<string, string> }[] = [];
  let rest = stdout;
  while (rest.startsWith('HTTP/')) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    );
    heads.push({ status: Number(statusLine.split(' ')[1]), headers });
    rest = rest.slice(end + 4);
  }
  return { heads, body: rest };
}

/** Writes `bytes` on one TLS connection, and reads everything until the server closes it. */
function rawExchange(bytes: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca: server.ca });
    let received = '';
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no end after: ${received}`)));
    socket.on('secureConnect', () => socket.write(bytes));
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.once('error', reject);
    socket.once('close', () => resolve(received));
  });
}

const auth = (): [string, string] => ['Authorization', `Bearer ${server.adminKey}`];
const inProject = (): [string, string] => ['X-Service-Project-Id', world.project.id];
const absolute = (target: string) => `${origin}${target}`;
const json = (answer: Answer) => JSON.parse(answer.body) as Record<string, unknown>;

describe('absolute-form request targets (RFC 9112 §3.2.2)', () => {
  it("runs the whole lifecycle through urllib3's connection pool with absolute URLs", async () => {
    const run = await python('lifecycle_urllib3.py', [origin, server.adminKey, caFile]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ calls: expect.any(Number) });
  });

  // Each request is sent in origin-form, then in absolute-form: the answers must be the same.
  const cases: [string, () => PythonRequest][] = [
    ['GET /status', () => ({ method: 'GET', target: '/v0/status', headers: [auth()] })],
    ['a request without a key', () => ({ method: 'GET', target: '/v0/org' })],
    [
      'an unknown query parameter',
      () => ({ method: 'GET', target: '/v0/projects?colour=red', headers: [auth()] }),
    ],
    ['an unknown route', () => ({ method: 'GET', target: '/v0/nothing/here', headers: [auth()] })],
    [
      'a method the path does not have',
      () => ({ method: 'PATCH', target: '/v0/projects', headers: [auth()] }),
    ],
    [
      'a project route without its header',
      () => ({ method: 'GET', target: '/v0/pipelines', headers: [auth()] }),
    ],
    [
      'a body its schema refuses',
      () => ({
        method: 'POST',
        target: '/v0/projects',
        headers: [auth(), ['Content-Type', 'application/json']],
        body: '{"name": "Not A Name"}',
      }),
    ],
    [
      'a project read by a percent-encoded name',
      () => ({
        method: 'GET',
        target: `/v0/projects/name/${world.project.name.replaceAll('-', '%2D')}`,
        headers: [auth()],
      }),
    ],
    [
      'a scratchpad value',
      () => ({
        method: 'GET',
        target: `/v0/pipelines/id/${world.ids.pipelines}/scratchpad/key/${encodeURIComponent(world.scratchpad.key)}`,
        headers: [auth(), inProject()],
      }),
    ],
  ];
  it.each(cases)('answers %s as its origin-form', async (_what, request) => {
    const sent = request();
    const [asOrigin, asAbsolute, withOtherAuthority] = await httpClient([
      sent,
      { ...sent, target: absolute(sent.target) },
      // The target's authority, not Host, names the server: any is served the same.
      { ...sent, target: `https://elsewhere.example:1${sent.target}` },
    ]);
    for (const answer of [asAbsolute, withOtherAuthority]) {
      expect(answer?.status).toBe(asOrigin?.status);
      expect(answer?.headers['content-type']).toBe(asOrigin?.headers['content-type']);
      expect(answer?.headers.allow).toBe(asOrigin?.headers.allow);
      expect(answer?.body).toBe(asOrigin?.body);
    }
  });

  it('logs an absolute-form request with the route and path of its origin-form', async () => {
    const requestId = uniqueName('absolute');
    const name = world.project.name;
    const [answer, unknown] = await httpClient([
      {
        method: 'GET',
        target: absolute(`/v0/projects/name/${name}`),
        headers: [auth(), ['X-Request-Id', requestId]],
      },
      {
        method: 'GET',
        target: absolute('/v0/nothing'),
        headers: [auth(), ['X-Request-Id', `${requestId}-2`]],
      },
    ]);
    expect(answer?.status).toBe(200);
    expect(json(unknown as Answer)).toMatchObject({
      code: 'route_not_found',
      data: { target: '/v0/nothing' },
    });
    expect(logged.find((line) => line.request_id === requestId)).toMatchObject({
      method: 'GET',
      route: '/v0/projects/name/{name}',
      status: 200,
    });
    expect(logged.find((line) => line.request_id === `${requestId}-2`)).toMatchObject({
      route: '/v0/nothing',
    });
  });

  it('is what curl sends with --request-target, and answers it', async () => {
    const { heads, body } = await curl([
      '--request-target',
      absolute('/v0/org'),
      '-H',
      `Authorization: Bearer ${server.adminKey}`,
      `${origin}/v0/org`,
    ]);
    expect(heads.map((head) => head.status)).toEqual([200]);
    expect(JSON.parse(body)).toMatchObject({ id: world.orgId });
  });
});

describe('the JSON media type', () => {
  it('is exactly application/json on every JSON answer, success or error; scratchpad values stay text', async () => {
    const answers = await httpClient([
      { method: 'GET', target: '/v0/status', headers: [auth()] },
      {
        method: 'POST',
        target: '/v0/projects',
        headers: [auth(), ['Content-Type', 'application/json']],
        body: `{"name":"${uniqueName('m')}"}`,
      },
      { method: 'GET', target: '/v0/org' },
      { method: 'GET', target: '/v0/nothing', headers: [auth()] },
      { method: 'DELETE', target: '/v0/status', headers: [auth()] },
      {
        method: 'POST',
        target: '/v0/projects',
        headers: [auth(), ['Content-Type', 'application/json']],
        body: '{',
      },
      {
        method: 'GET',
        target: `/v0/pipelines/id/${world.ids.pipelines}/scratchpad`,
        headers: [auth(), inProject()],
      },
      {
        method: 'GET',
        target: `/v0/pipelines/id/${world.ids.pipelines}/scratchpad/key/${encodeURIComponent(world.scratchpad.key)}`,
        headers: [auth(), inProject()],
      },
    ]);
    expect(answers.map((answer) => [answer.status, answer.headers['content-type']])).toEqual([
      [200, 'application/json'],
      [201, 'application/json'],
      [401, 'application/json'],
      [404, 'application/json'],
      [405, 'application/json'],
      [400, 'application/json'],
      [200, 'application/json'],
      [200, 'text/plain; charset=utf-8'],
    ]);
  });
});

// Live streams do not end: what HEAD answers on them has a test of its own.
const GET_OPERATIONS = OPERATIONS.filter((operation) => operation.method === 'get' && !operation.streams);
const STREAM_OPERATIONS = OPERATIONS.filter((operation) => operation.streams);
const HEAD_PATHS = new Set(OPERATIONS.filter((operation) => operation.method === 'head').map((o) => o.path));

describe('HEAD', () => {
  it('answers on every GET route what GET answers, headers and all, without the body', async () => {
    const requests = GET_OPERATIONS.filter((operation) => !HEAD_PATHS.has(operation.path)).flatMap(
      (operation) => {
        const { path, headers = {} } = validRequest(operation, world);
        const request = { target: path, headers: Object.entries(headers) };
        return [
          { ...request, method: 'GET' },
          { ...request, method: 'HEAD' },
        ];
      },
    );
    const answers = await httpClient(requests);
    for (let i = 0; i < answers.length; i += 2) {
      const [get, head] = [answers[i] as Answer, answers[i + 1] as Answer];
      const what = requests[i]?.target;
      expect([what, get.status, head.status]).toEqual([what, 200, 200]);
      expect([what, head.body]).toEqual([what, '']);
      expect([what, head.headers['content-type']]).toEqual([what, get.headers['content-type']]);
      expect([what, head.headers['content-length']]).toEqual([what, String(Buffer.byteLength(get.body))]);
    }
  });

  it("answers a live stream's headers and ends, without the stream", async () => {
    expect(STREAM_OPERATIONS.length).toBeGreaterThan(0);
    const requests = STREAM_OPERATIONS.map((operation) => {
      const { path, headers = {} } = validRequest(operation, world);
      return { method: 'HEAD', target: path, headers: Object.entries(headers) };
    });
    const answers = await httpClient(requests);
    for (const [i, answer] of answers.entries()) {
      const what = requests[i]?.target;
      expect([what, answer.status, answer.body]).toEqual([what, 200, '']);
      expect([what, answer.headers['content-type']]).toEqual([what, 'text/event-stream; charset=utf-8']);
    }
  });

  it('answers 405 where the path has no GET, and is logged as HEAD', async () => {
    const requestId = uniqueName('head');
    const [answer] = await httpClient([
      {
        method: 'HEAD',
        target: `/v0/commands/id/${world.ids.commands}/execute`,
        headers: [auth(), inProject(), ['X-Request-Id', requestId]],
      },
    ]);
    expect(answer).toMatchObject({ status: 405, body: '' });
    expect(answer?.headers.allow).toBe('POST, OPTIONS');
    expect(logged.find((line) => line.request_id === requestId)).toMatchObject({
      method: 'HEAD',
      status: 405,
    });
  });
});

/** The methods each path of the spec answers: its own, HEAD where it has GET, and OPTIONS. */
function allowedOn(path: string): string[] {
  const methods = new Set(OPERATIONS.filter((o) => o.path === path).map((o) => o.method.toUpperCase()));
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return [...methods].sort();
}

describe('OPTIONS', () => {
  it("answers 200 on every path with the path's methods in Allow, and no body", async () => {
    const paths = [...new Set(OPERATIONS.map((operation) => operation.path))];
    const targets = paths.map((path) => {
      const operation = OPERATIONS.find((o) => o.path === path);
      return operation ? validRequest(operation, world).path : '';
    });
    const answers = await httpClient(
      targets.map((target) => ({ method: 'OPTIONS', target, headers: [auth()] })),
    );
    answers.forEach((answer, i) => {
      const path = paths[i] as string;
      expect([path, answer.status, answer.body, answer.headers['content-length']]).toEqual([
        path,
        200,
        '',
        '0',
      ]);
      expect([path, answer.headers.allow?.split(', ').sort()]).toEqual([path, allowedOn(path)]);
    });
  });

  it('answers OPTIONS * with every method of the API (curl)', async () => {
    const { heads, body } = await curl([
      '-X',
      'OPTIONS',
      '--request-target',
      '*',
      '-H',
      `Authorization: Bearer ${server.adminKey}`,
      `${origin}/`,
    ]);
    expect(heads).toMatchObject([{ status: 200, headers: { 'content-length': '0' } }]);
    const every = new Set(OPERATIONS.flatMap((operation) => allowedOn(operation.path)));
    expect(heads[0]?.headers.allow?.split(', ').sort()).toEqual([...every].sort());
    expect(body).toBe('');
  });

  it('needs a key, and answers route_not_found on a path the API does not have', async () => {
    const [unauthenticated, unknown] = await httpClient([
      { method: 'OPTIONS', target: '/v0/projects' },
      { method: 'OPTIONS', target: '/v0/nothing', headers: [auth()] },
    ]);
    expect(unauthenticated?.status).toBe(401);
    expect(json(unknown as Answer)).toMatchObject({ code: 'route_not_found' });
  });

  it('is listed with HEAD in the Allow of a 405', async () => {
    const [answer] = await httpClient([{ method: 'PUT', target: '/v0/projects', headers: [auth()] }]);
    expect(answer?.status).toBe(405);
    expect(answer?.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(json(answer as Answer)).toMatchObject({ data: { allow: 'GET, HEAD, POST, OPTIONS' } });
  });
});

describe('request bodies', () => {
  it('waits for the body of Expect: 100-continue after answering 100 Continue (curl)', async () => {
    const name = uniqueName('continue');
    const { heads, body } = await curl([
      '-H',
      `Authorization: Bearer ${server.adminKey}`,
      '-H',
      'Content-Type: application/json',
      '-H',
      'Expect: 100-continue',
      '--data-binary',
      JSON.stringify({ name }),
      `${origin}/v0/projects`,
    ]);
    expect(heads.map((head) => head.status)).toEqual([100, 201]);
    expect(JSON.parse(body)).toMatchObject({ name });
  });

  it('reads chunked bodies, JSON and raw text, split anywhere (http.client and curl)', async () => {
    const name = uniqueName('chunked');
    const body = JSON.stringify({ name });
    const entry = `/v0/pipelines/id/${world.ids.pipelines}/scratchpad/key/chunked`;
    const [created, stored, read] = await httpClient([
      {
        method: 'POST',
        target: '/v0/projects',
        headers: [auth(), ['Content-Type', 'application/json']],
        chunks: [body.slice(0, 3), body.slice(3, 10), body.slice(10)],
      },
      { method: 'PUT', target: entry, headers: [auth(), inProject()], chunks: ['caf', 'é au ', 'lait'] },
      { method: 'GET', target: entry, headers: [auth(), inProject()] },
    ]);
    expect(created?.status).toBe(201);
    expect(json(created as Answer)).toMatchObject({ name });
    expect(stored?.status).toBe(204);
    expect(read?.body).toBe('café au lait');

    const other = uniqueName('chunked');
    const byCurl = await curl([
      '-H',
      `Authorization: Bearer ${server.adminKey}`,
      '-H',
      'Content-Type: application/json',
      '-H',
      'Transfer-Encoding: chunked',
      '--data-binary',
      JSON.stringify({ name: other }),
      `${origin}/v0/projects`,
    ]);
    expect(byCurl.heads.at(-1)?.status).toBe(201);
    expect(JSON.parse(byCurl.body)).toMatchObject({ name: other });
  });
});

describe('connections and Host', () => {
  it('keeps a connection open between requests, and closes it after Connection: close', async () => {
    const answers = await httpClient([
      { method: 'GET', target: '/v0/status', headers: [auth()] },
      { method: 'GET', target: '/v0/status', headers: [auth(), ['Connection', 'close']] },
      // http.client opens a new connection for this one.
      { method: 'GET', target: '/v0/org', headers: [auth()] },
    ]);
    expect(answers.map((answer) => [answer.status, answer.closed])).toEqual([
      [200, false],
      [200, true],
      [200, false],
    ]);
    expect(answers[1]?.headers.connection).toBe('close');
  });

  it('answers pipelined requests in order on one connection', async () => {
    const request = (path: string, last = false) =>
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.adminKey}\r\n` +
      `${last ? 'Connection: close\r\n' : ''}\r\n`;
    const received = await rawExchange(
      request('/v0/status') +
        request('/v0/org') +
        request(absolute('/v0/account')) +
        request('/v0/nothing', true),
    );
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    expect(statuses).toEqual([200, 200, 200, 404]);
    expect(received.indexOf(`"id":"${world.orgId}"`)).toBeLessThan(received.indexOf('"email_address"'));
  });

  it('serves any Host, answers 400 to HTTP/1.1 without one (RFC 9112 §3.2) and serves HTTP/1.0 without one', async () => {
    const [otherPort, none] = await httpClient([
      { method: 'GET', target: '/v0/status', headers: [auth(), ['Host', '127.0.0.1:1']], host: false },
      { method: 'GET', target: '/v0/status', headers: [auth()], host: false },
    ]);
    expect(otherPort?.status).toBe(200);
    expect(none?.status).toBe(400);
    const old = await rawExchange(
      `GET /v0/status HTTP/1.0\r\nAuthorization: Bearer ${server.adminKey}\r\n\r\n`,
    );
    expect(old).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(old.endsWith('\r\n\r\n{}')).toBe(true);
  });
});

describe('percent-encoded path segments', () => {
  it('decodes route variables, and takes encoded unreserved characters for themselves', async () => {
    const name = world.project.name;
    const pipeline = `/v0/pipelines/id/${world.ids.pipelines}/scratchpad`;
    const answers = await httpClient([
      { method: 'GET', target: `/v0/projects/name/${name.replaceAll('-', '%2D')}`, headers: [auth()] },
      { method: 'GET', target: `/v0/projects/name/${name.replaceAll('-', '%2d')}`, headers: [auth()] },
      { method: 'GET', target: '/v0/%70rojects/id/%32'.replace('%32', world.project.id), headers: [auth()] },
      { method: 'PUT', target: `${pipeline}/key/%E2%9C%93`, headers: [auth(), inProject()], body: 'checked' },
      { method: 'PUT', target: `${pipeline}/key/a%2Fb%20c`, headers: [auth(), inProject()], body: 'slashed' },
      { method: 'GET', target: `${pipeline}/key/%e2%9c%93`, headers: [auth(), inProject()] },
      { method: 'GET', target: pipeline, headers: [auth(), inProject()] },
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 204, 204, 200, 200]);
    for (const answer of answers.slice(0, 3)) expect(json(answer)).toMatchObject({ id: world.project.id });
    expect(answers[5]?.body).toBe('checked');
    expect(json(answers[6] as Answer)).toMatchObject({ '✓': 'checked', 'a/b c': 'slashed' });
  });
});
