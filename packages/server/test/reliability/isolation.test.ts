import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient, Schemas } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, finished, pipeline, task } from '../helpers/projects.js';
import { sharedTestServer, uniqueName } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';
import { recordFigures } from './figures.js';
import { createSender, type RawRequest, type Sender } from './http.js';
import { type Answer, OPERATIONS, type Operation, specProblem } from './spec.js';
import { buildWorld, validRequest, type World } from './world.js';

// The isolation matrix: every operation of the spec, aimed at organization A's objects,
// sent by callers that must not reach them: no key, a malformed, forged or revoked key,
// the key of organization B (with A's project, or with B's project and A's ids), A's key
// with B's project, a `user` account where `admin` is needed, the key of a running task
// outside its project. Each gets exactly the 401, 403 or 404 the spec gives it, and no
// answer holds a byte of the other organization's identifiers or names.

const PROJECT_HEADER = 'x-service-project-id';
const ADMIN_ONLY = new Set([
  'createProject',
  'updateProject',
  'deleteProject',
  'createAccount',
  'disableAccount',
  'enableAccount',
  // The world's key is the admin's: a user manages its own keys only.
  'getApiKey',
  'revokeApiKey',
]);
const STATUS_ROUTES = new Set(['getStatus', 'headStatus']);
const NOT_FOUND: Record<string, string> = {
  accounts: 'unknown_account',
  projects: 'unknown_project',
  resources: 'unknown_resource',
  commands: 'unknown_command',
  command_executions: 'unknown_command_execution',
  pipelines: 'unknown_pipeline',
  tasks: 'unknown_task',
  events: 'unknown_event',
  triggers: 'unknown_webhook',
  identities: 'unknown_identity',
  api_keys: 'unknown_api_key',
};
/**
 * What a public route (a webhook delivery, which takes no key) answers every caller alike: A's
 * webhook is signed and has no secret, so it refuses every delivery and starts nothing.
 */
const PUBLIC_ANSWER = { status: 403, code: 'webhook_secret_not_set' };

const collectionOf = (operation: Operation) => operation.path.split('/')[1] ?? '';
const hasProjectHeader = (operation: Operation) =>
  operation.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === PROJECT_HEADER);
const hasPath = (operation: Operation, name: string) => operation.path.includes(`{${name}}`);
const successOf = (operation: Operation) => Number(Object.keys(operation.responses).find((s) => s < '300'));
const isRead = (operation: Operation) => operation.method === 'get' || operation.method === 'head';

interface Expected {
  status: number;
  code?: string;
}

interface Caller {
  name: string;
  /** The request this caller sends for `operation`, or undefined when the row does not apply. */
  request(operation: Operation, base: RawRequest): RawRequest | undefined;
  expected(operation: Operation): Expected;
  /** Text that must appear in no answer to this caller (unless the request held it). */
  forbidden: () => string[];
}

const server = sharedTestServer();
let a: World;
let b: World;
let sender: Sender;
let shared: string;
let taskKey: string;
let otherProjectOfA: { id: string; name: string };
let holdingPipeline: { client: ApiClient; id: string };
let userKey: string;
let revokedKey: string;
let before: unknown;
const tally = { requests: 0, failures5xx: 0, checked: 0 };

/**
 * A task of A that hands its key over through a file, and runs until released (once every
 * test of the file has used the key: minutes on a loaded machine, hence the wide bound).
 */
const holder = () => [
  task('holder', {
    environment: { DIR: shared },
    steps: [
      {
        code:
          'printf %s "$PIPEWRIGHT_API_KEY" > "$DIR/key.tmp"; mv "$DIR/key.tmp" "$DIR/key"\n' +
          'i=0; while [ ! -e "$DIR/release" ] && [ "$i" -lt 12000 ]; do sleep 0.05; i=$((i+1)); done',
      },
    ],
  }),
  pipeline('holder', [{ task: 'holder' }]),
  command('holder', ['holder']),
];

async function organization(): Promise<{ adminKey: string; name: string }> {
  const adminKey = await server.newOrganization();
  const { data } = await server.client(adminKey).GET('/org');
  return { adminKey, name: data?.name ?? '' };
}

beforeAll(async () => {
  shared = server.tempDir();
  sender = createSender(server);
  const orgA = await organization();
  const orgB = await organization();
  a = await buildWorld(server, orgA.adminKey, holder() as Schemas['ResourceSpec'][]);
  b = await buildWorld(server, orgB.adminKey);
  const { data: other } = await server
    .client(a.apiKey)
    .POST('/projects', { body: { name: uniqueName('other') } });
  otherProjectOfA = { id: other?.id ?? '', name: other?.name ?? '' };
  userKey = await server.newAccount(orgA.name, 'user');
  revokedKey = await server.newAccount(orgA.name, 'admin');
  await server.store.apiKeys.revoke(revokedKey.slice(4, 31));
  const client = server.client(a.apiKey, a.project.id);
  const { data: resources } = await client.GET('/resources', {
    params: { query: { type: 'command', size: 100 } },
  });
  const holderCommand = resources?.elements.find((r) => r.spec.name === 'holder')?.id ?? '';
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: holderCommand } },
    body: {},
  });
  holdingPipeline = { client, id: execution?.pipeline_ids[0] ?? '' };
  const keyFile = join(shared, 'key');
  await waitFor(
    async () => existsSync(keyFile),
    (exists) => exists,
  );
  taskKey = readFileSync(keyFile, 'utf8');
  before = await snapshot(a);
});

afterAll(async () => {
  recordFigures('isolation', tally);
  writeFileSync(join(shared, 'release'), '');
  await sender.close();
});

/** What A's admin sees of A (but login times): must be the same after the matrix. */
async function snapshot(world: World) {
  const client = server.client(world.apiKey, world.project.id);
  const lists = await Promise.all([
    server.client(world.apiKey).GET('/projects', { params: { query: { size: 100 } } }),
    server.client(world.apiKey).GET('/accounts', { params: { query: { size: 100 } } }),
    client.GET('/resources', { params: { query: { size: 100 } } }),
    client.GET('/events', { params: { query: { size: 100 } } }),
    client.GET('/command_executions', { params: { query: { size: 100 } } }),
    client.GET('/pipelines/id/{id}/scratchpad', { params: { path: { id: world.ids.pipelines ?? '' } } }),
  ]);
  return lists.map((list) =>
    JSON.parse(JSON.stringify(list.data), (key, value) => (key === 'last_login_time' ? undefined : value)),
  );
}

const withHeaders = (base: RawRequest, change: (headers: Record<string, string>) => void): RawRequest => {
  const headers = { ...base.headers };
  change(headers);
  return { ...base, headers };
};
const withKey = (base: RawRequest, key: string | undefined) =>
  withHeaders(base, (headers) => {
    if (key === undefined) delete headers.authorization;
    else headers.authorization = key;
  });

const unauthenticated = (name: string, authorization: () => string | undefined, code: string): Caller => ({
  name,
  request: (_operation, base) => withKey(base, authorization()),
  expected: () => ({ status: 401, code }),
  forbidden: () => [...a.secrets, ...b.secrets],
});

/** A's admin key with its secret changed: a key of the right shape that matches no hash. */
const forgedKey = () => {
  const last = a.apiKey.at(-1) === 'A' ? 'B' : 'A';
  return `Bearer ${a.apiKey.slice(0, -1)}${last}`;
};

const CALLERS: Caller[] = [
  unauthenticated('no key', () => undefined, 'authentication_required'),
  unauthenticated(
    'another scheme',
    () => `Basic ${Buffer.from('admin:admin').toString('base64')}`,
    'authentication_required',
  ),
  unauthenticated('a malformed key', () => 'Bearer pwk_not-a-key', 'invalid_api_key'),
  unauthenticated('a forged key', forgedKey, 'invalid_api_key'),
  unauthenticated('a revoked key', () => `Bearer ${revokedKey}`, 'invalid_api_key'),
  {
    name: "B's key on A's objects",
    request: (_operation, base) => withKey(base, `Bearer ${b.apiKey}`),
    expected: (operation) => {
      if (hasProjectHeader(operation)) return { status: 404, code: 'unknown_project' };
      if (hasPath(operation, 'id')) return { status: 404, code: NOT_FOUND[collectionOf(operation)] ?? '' };
      if (hasPath(operation, 'name')) return { status: 404, code: 'unknown_project' };
      return { status: successOf(operation) };
    },
    forbidden: () => a.secrets,
  },
  {
    name: "B's key in B's project with A's ids",
    request: (operation, base) =>
      hasProjectHeader(operation) && hasPath(operation, 'id')
        ? withHeaders(base, (headers) => {
            headers.authorization = `Bearer ${b.apiKey}`;
            headers[PROJECT_HEADER] = b.project.id;
          })
        : undefined,
    expected: (operation) => ({ status: 404, code: NOT_FOUND[collectionOf(operation)] ?? '' }),
    forbidden: () => a.secrets,
  },
  {
    name: "A's key with B's project",
    request: (operation, base) =>
      hasProjectHeader(operation)
        ? withHeaders(base, (headers) => {
            headers[PROJECT_HEADER] = b.project.id;
          })
        : undefined,
    expected: () => ({ status: 404, code: 'unknown_project' }),
    forbidden: () => b.secrets,
  },
  {
    name: 'a user account where admin is needed',
    request: (operation, base) =>
      ADMIN_ONLY.has(operation.id) || isRead(operation) ? withKey(base, `Bearer ${userKey}`) : undefined,
    expected: (operation) =>
      ADMIN_ONLY.has(operation.id)
        ? { status: 403, code: 'permission_denied' }
        : { status: successOf(operation) },
    forbidden: () => b.secrets,
  },
  {
    name: "a task's key outside its project",
    request: (operation, base) =>
      withHeaders(base, (headers) => {
        headers.authorization = `Bearer ${taskKey}`;
        if (hasProjectHeader(operation)) headers[PROJECT_HEADER] = otherProjectOfA.id;
      }),
    expected: (operation) => {
      if (STATUS_ROUTES.has(operation.id)) return { status: 200 };
      if (hasProjectHeader(operation)) return { status: 404, code: 'unknown_project' };
      return { status: 403, code: 'permission_denied' };
    },
    forbidden: () => [...b.secrets, otherProjectOfA.name, a.orgId, a.orgName, a.email],
  },
  {
    name: "a task's key reading its project",
    request: (operation, base) =>
      hasProjectHeader(operation) && isRead(operation) ? withKey(base, `Bearer ${taskKey}`) : undefined,
    expected: (operation) => ({ status: successOf(operation) }),
    forbidden: () => [...b.secrets, otherProjectOfA.name, otherProjectOfA.id],
  },
];

function problemOf(
  operation: Operation,
  caller: Caller,
  sent: RawRequest,
  answer: Answer,
): string | undefined {
  const expected = operation.public ? PUBLIC_ANSWER : caller.expected(operation);
  if (answer.status !== expected.status)
    return `answered ${answer.status}, expected ${expected.status}: ${answer.text}`;
  const mismatch = specProblem(operation, answer);
  if (mismatch) return mismatch;
  if (answer.status === 401 && !String(answer.headers['www-authenticate']).startsWith('Bearer')) {
    return 'a 401 without WWW-Authenticate: Bearer';
  }
  if (expected.code && operation.method !== 'head') {
    const { code } = JSON.parse(answer.text) as { code: string };
    if (code !== expected.code) return `answered ${code}, expected ${expected.code}`;
  }
  const request = JSON.stringify(sent);
  const leaked = caller
    .forbidden()
    .filter((secret) => answer.text.includes(secret) && !request.includes(secret));
  return leaked.length > 0 ? `leaked ${leaked.join(', ')}: ${answer.text.slice(0, 300)}` : undefined;
}

describe('the isolation matrix', () => {
  it.each(CALLERS.map((caller) => [caller.name, caller] as const))(
    '%s: every route answers as the spec says, and reveals nothing',
    async (_name, caller) => {
      const problems: string[] = [];
      for (const operation of OPERATIONS) {
        const sent = caller.request(operation, validRequest(operation, a));
        if (!sent) continue;
        tally.requests += 1;
        const answer = await sender.send(sent);
        if (answer.status >= 500) tally.failures5xx += 1;
        const problem = problemOf(operation, caller, sent, answer);
        if (problem) problems.push(`${operation.id}: ${problem}`);
        else tally.checked += 1;
      }
      expect(problems).toEqual([]);
    },
  );

  it("left A's objects as they were", async () => {
    expect(await snapshot(a)).toEqual(before);
  });

  it("refuses the task's key once its task has ended", async () => {
    writeFileSync(join(shared, 'release'), '');
    await finished(holdingPipeline.client, holdingPipeline.id);
    const answer = await sender.send({
      method: 'get',
      path: '/v0/resources',
      headers: { authorization: `Bearer ${taskKey}`, [PROJECT_HEADER]: a.project.id },
    });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'invalid_api_key' });
  });
});
