import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiClient, ApiError, Schemas } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { createSecretBox, SECRET_KEY_BYTES } from '../../src/domain/secrets/secret-box.js';
import {
  command,
  execute,
  finished,
  pipeline,
  projectWith,
  stepsOf,
  task,
  tasksOf,
} from '../helpers/projects.js';
import { sharedTestServer, startTestServer } from '../helpers/test-server.js';
import { claimUidRange } from '../helpers/uid-ranges.js';
import { onPostgres } from '../postgres/databases.js';

// Identities: credentials of a project, stored encrypted through the API, given to the steps of
// the tasks naming them, never shown back, and masked in what the steps print.

const server = sharedTestServer();

type IdentitySpec = Schemas['IdentitySpec'];

/** A value no test shares, long enough to be found alone in a database file. */
const secretValue = (label: string) => `${label}-${randomBytes(18).toString('hex')}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function create(client: ApiClient, spec: IdentitySpec) {
  const { data, response } = await client.POST('/identities', { body: spec });
  if (!data) throw new Error('no identity');
  return { data, status: response.status, text: JSON.stringify(data) };
}

/** The error a request is answered with: the client throws it. */
async function refusal(request: Promise<unknown>): Promise<ApiError> {
  try {
    await request;
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('the request succeeded');
}

/** A project with `specs` and a command `go` running pipeline `main`. */
async function projectRunning(specs: unknown[], apiKey?: string) {
  return projectWith(server, [...specs, command('go', ['main'])], apiKey);
}

/** Runs pipeline `main` of the project once; returns its end and its one task's steps. */
async function runMain(client: ApiClient) {
  const pipelineId = await execute(client, 'go');
  const end = await finished(client, pipelineId);
  const [only] = await tasksOf(client, pipelineId);
  return { end, task: only, steps: await stepsOf(client, only?.id ?? '') };
}

/** `name=value` lines of a step's output, as an object. */
function linesOf(output: string): Record<string, string> {
  return Object.fromEntries(
    output
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('createIdentity', () => {
  it('stores an identity and answers 201 with its members and variables, never its values', async () => {
    const { client, project } = await projectWith(server, []);
    const password = secretValue('password');
    const created = await create(client, {
      name: 'registry',
      kind: 'username_password',
      description: 'The package registry.',
      data: { username: 'deploy', password },
    });
    expect(created.status).toBe(201);
    expect(created.data).toEqual({
      id: expect.any(String),
      org_id: project.org_id,
      project_id: project.id,
      name: 'registry',
      kind: 'username_password',
      description: 'The package registry.',
      fields: ['username', 'password'],
      variables: ['REGISTRY_USERNAME', 'REGISTRY_PASSWORD'],
      creation_time: expect.any(String),
      update_time: created.data?.creation_time,
    });
    expect(created.text).not.toContain(password);
    expect(created.text).not.toContain('deploy"');
  });

  it('checks the members of each kind, reporting every problem', async () => {
    const { client } = await projectWith(server, []);
    const missing = await refusal(
      create(client, { name: 'a', kind: 'username_password', data: { username: 'x' } }),
    );
    expect(missing).toMatchObject({ status: 400, code: 'invalid_request_body' });
    expect(missing.data?.jsv_errors).toEqual([
      { pointer: '/data', reason: 'an identity of kind username_password needs password' },
    ]);
    const foreign = await refusal(
      create(client, { name: 'b', kind: 'api_token', data: { token: 't', value: 'v' } }),
    );
    expect(foreign.data?.jsv_errors).toEqual([
      { pointer: '/data/value', reason: 'an identity of kind api_token takes no value' },
    ]);
    const malformed = await refusal(
      create(client, { name: '9lives', kind: 'secret', data: { value: 'nul \u0000 inside' } }),
    );
    expect(malformed.status).toBe(400);
    const pointers = ((malformed.data?.jsv_errors ?? []) as { pointer: string }[]).map((e) => e.pointer);
    expect(pointers.sort()).toEqual(['/data/value', '/name']);
    const { data } = await client.GET('/identities', {});
    expect(data?.elements).toEqual([]);
  });

  it('refuses a name taken in the project, or one giving the same variables', async () => {
    const { client } = await projectWith(server, []);
    expect((await create(client, { name: 'deploy-key', kind: 'secret', data: { value: 'a' } })).status).toBe(
      201,
    );
    for (const name of ['deploy-key', 'deploy_key']) {
      const again = await refusal(create(client, { name, kind: 'secret', data: { value: 'b' } }));
      expect(again).toMatchObject({ status: 409, code: 'duplicate_identity_name' });
    }
  });

  it('refuses the key of a running task, which may read identities', async () => {
    const { client } = await projectRunning([
      task('writer', {
        steps: [
          {
            code: [
              'curl -s -o /dev/null -w "list=%{http_code}\\n" -H "Authorization: Bearer $PIPEWRIGHT_API_KEY" -H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" "$PIPEWRIGHT_API_URL/v0/identities"',
              'curl -s -o /dev/null -w "create=%{http_code}\\n" -X POST -H "Content-Type: application/json" -d \'{"name":"sneaky","kind":"secret","data":{"value":"x"}}\' -H "Authorization: Bearer $PIPEWRIGHT_API_KEY" -H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" "$PIPEWRIGHT_API_URL/v0/identities"',
            ].join('\n'),
          },
        ],
      }),
      pipeline('main', [{ task: 'writer' }]),
    ]);
    const { end, steps } = await runMain(client);
    expect(end.status).toBe('successful');
    expect(linesOf(steps[0]?.output ?? '')).toEqual({ list: '200', create: '403' });
  });
});

describe('listIdentities', () => {
  it('lists the identities of the project only, by name or id, without values', async () => {
    const { client } = await projectWith(server, []);
    const { client: other } = await projectWith(server, []);
    const token = secretValue('token');
    for (const name of ['zeta', 'alpha']) {
      await create(client, { name, kind: 'api_token', data: { token } });
    }
    await create(other, { name: 'elsewhere', kind: 'secret', data: { value: 'v' } });
    const byName = await client.GET('/identities', { params: { query: { sort: 'name' } } });
    expect(byName.data?.elements.map((i) => i.name)).toEqual(['alpha', 'zeta']);
    expect(JSON.stringify(byName.data)).not.toContain(token);
    const byId = await client.GET('/identities', { params: { query: { size: 1 } } });
    const smallest = byName.data?.elements.map((i) => i.id).sort()[0];
    expect(byId.data?.elements.map((i) => i.id)).toEqual([smallest]);
    expect(byId.data?.next).toBeDefined();
  });
});

describe('getIdentity', () => {
  it('reads an identity by id and by name, in its project only', async () => {
    const { client } = await projectWith(server, []);
    const { client: sibling } = await projectWith(server, []);
    const value = secretValue('value');
    const { data: created } = await create(client, { name: 'shared', kind: 'secret', data: { value } });
    const id = created.id;
    const byId = await client.GET('/identities/id/{id}', { params: { path: { id } } });
    expect(byId.data).toEqual(created);
    const byName = await client.GET('/identities/name/{name}', { params: { path: { name: 'shared' } } });
    expect(byName.data).toEqual(created);
    // Another project of the organization does not see it.
    const elsewhere = await refusal(sibling.GET('/identities/id/{id}', { params: { path: { id } } }));
    expect(elsewhere).toMatchObject({ status: 404, code: 'unknown_identity' });
    const unnamed = await refusal(
      sibling.GET('/identities/name/{name}', { params: { path: { name: 'shared' } } }),
    );
    expect(unnamed).toMatchObject({ status: 404, code: 'unknown_identity' });
  });

  it('shows nothing to another organization', async () => {
    const { client, project } = await projectWith(server, []);
    const { data: created } = await create(client, { name: 'mine', kind: 'secret', data: { value: 'v' } });
    const stranger = server.client(await server.newOrganization(), project.id);
    const read = await refusal(stranger.GET('/identities/id/{id}', { params: { path: { id: created.id } } }));
    expect(read).toMatchObject({ status: 404, code: 'unknown_project' });
    const list = await refusal(stranger.GET('/identities', {}));
    expect(list).toMatchObject({ status: 404, code: 'unknown_project' });
  });
});

describe('getIdentityByName', () => {
  it('answers 404 unknown_identity for a name the project does not have', async () => {
    const { client } = await projectWith(server, []);
    const read = await refusal(
      client.GET('/identities/name/{name}', { params: { path: { name: 'absent' } } }),
    );
    expect(read).toMatchObject({ status: 404, code: 'unknown_identity' });
  });
});

describe('updateIdentity', () => {
  it('replaces an identity whole, keeping its id and creation time', async () => {
    const { client } = await projectWith(server, []);
    const { data: created } = await create(client, { name: 'old', kind: 'secret', data: { value: 'one' } });
    const id = created.id;
    const token = secretValue('new');
    const { data: updated, response } = await client.PUT('/identities/id/{id}', {
      params: { path: { id } },
      body: { name: 'renamed', kind: 'api_token', data: { token } },
    });
    expect(response.status).toBe(200);
    expect(updated).toEqual({
      ...created,
      name: 'renamed',
      kind: 'api_token',
      fields: ['token'],
      variables: ['RENAMED_TOKEN'],
      update_time: expect.any(String),
    });
    expect(JSON.stringify(updated)).not.toContain(token);
    // Its old name is free again; a name another identity has is not.
    expect((await create(client, { name: 'old', kind: 'secret', data: { value: 'v' } })).status).toBe(201);
    const clash = await refusal(
      client.PUT('/identities/id/{id}', {
        params: { path: { id } },
        body: { name: 'old', kind: 'secret', data: { value: 'v' } },
      }),
    );
    expect(clash).toMatchObject({ status: 409, code: 'duplicate_identity_name' });
  });
});

describe('deleteIdentity', () => {
  it('deletes an identity; tasks naming it then fail at their start, saying so', async () => {
    const { client, project } = await projectRunning([
      task('uses', { identities: ['gone'], steps: [{ code: 'echo ran' }] }),
      pipeline('main', [{ task: 'uses' }]),
    ]);
    const { data: created } = await create(client, { name: 'gone', kind: 'secret', data: { value: 'v' } });
    const { response } = await client.DELETE('/identities/id/{id}', {
      params: { path: { id: created.id } },
    });
    expect(response.status).toBe(204);
    const again = await refusal(
      client.DELETE('/identities/id/{id}', { params: { path: { id: created.id } } }),
    );
    expect(again).toMatchObject({ status: 404, code: 'unknown_identity' });
    const { end, task: failed, steps } = await runMain(client);
    expect(end.status).toBe('failed');
    expect(failed?.failure_message).toBe(
      `the task could not run: the task names identity "gone", which project "${project.name}" does not have (create it with POST /identities)`,
    );
    expect(steps).toEqual([]);
  });
});

describe('the identities of a task', () => {
  it('gives the steps their variables, and SSH keys as files only the task reads', async () => {
    const value = secretValue('generic');
    const password = secretValue('password');
    const token = secretValue('token');
    const privateKey = `-----BEGIN OPENSSH PRIVATE KEY-----\n${secretValue('key')}\n-----END OPENSSH PRIVATE KEY-----`;
    const knownHosts =
      'git.example.test ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';
    const { client } = await projectRunning([
      task('deploy', {
        identities: ['generic', 'registry', 'npm', 'deploy-key'],
        steps: [
          {
            // Hashes, not values: the values would be masked.
            code: [
              `h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }`,
              'echo "GENERIC_VALUE=$(h "$GENERIC_VALUE")"',
              'echo "REGISTRY_USERNAME=$(h "$REGISTRY_USERNAME")"',
              'echo "REGISTRY_PASSWORD=$(h "$REGISTRY_PASSWORD")"',
              'echo "NPM_TOKEN=$(h "$NPM_TOKEN")"',
              'echo "key=$(sha256sum < "$DEPLOY_KEY_PRIVATE_KEY_FILE" | cut -d" " -f1)"',
              'echo "hosts=$(sha256sum < "$DEPLOY_KEY_KNOWN_HOSTS_FILE" | cut -d" " -f1)"',
              'echo "modes=$(stat -c %a "$DEPLOY_KEY_PRIVATE_KEY_FILE" "$DEPLOY_KEY_KNOWN_HOSTS_FILE" "$(dirname "$DEPLOY_KEY_PRIVATE_KEY_FILE")" | tr "\\n" " ")"',
              'echo "in_tmpdir=$(case "$DEPLOY_KEY_PRIVATE_KEY_FILE" in "$TMPDIR"/*) echo yes;; *) echo no;; esac)"',
              'echo "ssh=$DEPLOY_KEY_SSH_COMMAND" | sed "s#$TMPDIR#TMPDIR#g"',
            ].join('\n'),
          },
        ],
      }),
      pipeline('main', [{ task: 'deploy' }]),
    ]);
    await create(client, { name: 'generic', kind: 'secret', data: { value } });
    await create(client, {
      name: 'registry',
      kind: 'username_password',
      data: { username: 'ci-bot', password },
    });
    await create(client, { name: 'npm', kind: 'api_token', data: { token } });
    await create(client, {
      name: 'deploy-key',
      kind: 'ssh_key',
      data: { private_key: privateKey, known_hosts: knownHosts },
    });
    const { end, steps } = await runMain(client);
    expect(end.status).toBe('successful');
    expect(linesOf(steps[0]?.output ?? '')).toEqual({
      GENERIC_VALUE: sha256(value),
      REGISTRY_USERNAME: sha256('ci-bot'),
      REGISTRY_PASSWORD: sha256(password),
      NPM_TOKEN: sha256(token),
      // ssh wants the end of line the JSON value did not have.
      key: sha256(`${privateKey}\n`),
      hosts: sha256(`${knownHosts}\n`),
      modes: '600 600 700 ',
      in_tmpdir: 'yes',
      ssh: 'ssh -i TMPDIR/pipewright-identities/deploy-key.private_key -o IdentitiesOnly=yes -o UserKnownHostsFile=TMPDIR/pipewright-identities/deploy-key.known_hosts -o StrictHostKeyChecking=yes',
    });
  });

  it.skipIf(process.getuid?.() !== 0)(
    'writes the files of a task that runs as a user of its own for that user only',
    async () => {
      // Task users must reach the work root; and a range of its own: each server kills every
      // process of its range.
      const root = mkdtempSync(join(tmpdir(), 'pipewright-identities-'));
      chmodSync(root, 0o711);
      const users = claimUidRange(2_100_200_000, 100);
      const ownUsers = await startTestServer({
        scheduler: { workRoot: join(root, 'work'), taskUsers: users.range },
      });
      try {
        const { client } = await projectWith(
          ownUsers,
          [
            task('ssh', {
              identities: ['key'],
              steps: [
                {
                  code: [
                    'echo "task=$(id -u)"',
                    'echo "file=$(stat -c "%u %a" "$KEY_PRIVATE_KEY_FILE")"',
                    'echo "dir=$(stat -c "%u %a" "$(dirname "$KEY_PRIVATE_KEY_FILE")")"',
                  ].join('\n'),
                },
              ],
            }),
            pipeline('main', [{ task: 'ssh' }]),
            command('go', ['main']),
          ],
          ownUsers.adminKey,
        );
        await create(client, { name: 'key', kind: 'ssh_key', data: { private_key: secretValue('key') } });
        const { end, steps } = await runMain(client);
        expect(end.status).toBe('successful');
        const seen = linesOf(steps[0]?.output ?? '');
        expect(Number(seen.task)).toBeGreaterThanOrEqual(users.range.first);
        expect(seen).toEqual({ task: seen.task, file: `${seen.task} 600`, dir: `${seen.task} 700` });
      } finally {
        await ownUsers.close();
        users.lock.release();
        rmSync(root, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(process.getuid?.() !== 0)(
    'claims no more tasks than it has task users ready, while their identities are read',
    async () => {
      // Regression: an attempt read its identities before it took its user, the loop claimed
      // again meanwhile, and a task failed with "no task user is ready". Two users, room for
      // eight tasks, ten instances at once.
      const root = mkdtempSync(join(tmpdir(), 'pipewright-identities-'));
      chmodSync(root, 0o711);
      const users = claimUidRange(2_100_300_000, 2);
      const fewUsers = await startTestServer({
        scheduler: { workRoot: join(root, 'work'), taskUsers: users.range, maxRunningTasks: 8 },
      });
      try {
        const { client } = await projectWith(
          fewUsers,
          [
            task('named', { identities: ['key'], steps: [{ code: 'test -s "$KEY_PRIVATE_KEY_FILE"' }] }),
            pipeline('main', [{ task: 'named', nb_instances: 10 }]),
            command('go', ['main']),
          ],
          fewUsers.adminKey,
        );
        await create(client, { name: 'key', kind: 'ssh_key', data: { private_key: secretValue('key') } });
        const pipelineId = await execute(client, 'go');
        expect((await finished(client, pipelineId)).status).toBe('successful');
        const ran = await tasksOf(client, pipelineId);
        expect(ran.map((t) => [t.status, t.retry])).toEqual(ran.map(() => ['successful', 0]));
        expect(ran).toHaveLength(10);
      } finally {
        await fewUsers.close();
        users.lock.release();
        rmSync(root, { recursive: true, force: true });
      }
    },
  );

  it('masks every value in the stored output, even written in pieces', async () => {
    const value = secretValue('split');
    const password = secretValue('password');
    const privateKey = `-----BEGIN KEY-----\n${secretValue('line')}\n-----END KEY-----`;
    const half = value.slice(0, 20);
    const { client } = await projectRunning([
      task('leaky', {
        identities: ['leak', 'login', 'key'],
        steps: [
          {
            code: [
              'echo "whole: $LEAK_VALUE"',
              // The first half alone, long enough for the recorder to store what came before it.
              `printf 'split: %s' "$(printf %s "$LEAK_VALUE" | cut -c1-20)"`,
              'sleep 1',
              `printf '%s\\n' "$(printf %s "$LEAK_VALUE" | cut -c21-)"`,
              'echo "user $LOGIN_USERNAME pass $LOGIN_PASSWORD"',
              'cat "$KEY_PRIVATE_KEY_FILE"',
              'printf "cut: %s" "$(printf %s "$LOGIN_PASSWORD" | cut -c1-12)"',
            ].join('\n'),
          },
          { code: 'echo "next step: $LEAK_VALUE"' },
        ],
      }),
      pipeline('main', [{ task: 'leaky' }]),
    ]);
    await create(client, { name: 'leak', kind: 'secret', data: { value } });
    await create(client, {
      name: 'login',
      kind: 'username_password',
      data: { username: 'operator', password },
    });
    await create(client, { name: 'key', kind: 'ssh_key', data: { private_key: privateKey } });
    const { end, steps } = await runMain(client);
    expect(end.status).toBe('successful');
    expect(steps.map((s) => s.output)).toEqual([
      'whole: ***\nsplit: ***\nuser *** pass ***\n***\ncut: ***',
      'next step: ***\n',
    ]);
    const everything = JSON.stringify(steps);
    for (const secret of [value, half, password, privateKey, 'operator']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('fails at its start, with a clear message, on a server whose key did not seal the identity', async () => {
    const wrongKey = await startTestServer({
      scheduler: { secrets: createSecretBox(randomBytes(SECRET_KEY_BYTES)) },
    });
    try {
      const { client } = await projectWith(
        wrongKey,
        [
          task('uses', { identities: ['sealed'], steps: [{ code: 'echo ran' }] }),
          pipeline('main', [{ task: 'uses' }]),
          command('go', ['main']),
        ],
        wrongKey.adminKey,
      );
      await create(client, { name: 'sealed', kind: 'secret', data: { value: 'v' } });
      const pipelineId = await execute(client, 'go');
      expect((await finished(client, pipelineId)).status).toBe('failed');
      const [failed] = await tasksOf(client, pipelineId);
      expect(failed?.failure_message).toBe(
        `the task could not run: identity "sealed" cannot be decrypted: the server's identity key is not the one it was stored with`,
      );
    } finally {
      await wrongKey.close();
    }
  });

  it('cannot use the identities of another project of the organization', async () => {
    const { client: owner } = await projectWith(server, []);
    await create(owner, { name: 'theirs', kind: 'secret', data: { value: secretValue('theirs') } });
    const { client, project } = await projectRunning([
      task('borrow', { identities: ['theirs'], steps: [{ code: 'echo "$THEIRS_VALUE"' }] }),
      pipeline('main', [{ task: 'borrow' }]),
    ]);
    const { end, task: failed } = await runMain(client);
    expect(end.status).toBe('failed');
    expect(failed?.failure_message).toContain(
      `identity "theirs", which project "${project.name}" does not have`,
    );
  });
});

describe('identities at rest', () => {
  // SQLite's file is read here; PostgreSQL's files are its server's.
  it.skipIf(onPostgres)(
    'are not in the database file in clear, and a deploy leaves them as they are',
    async () => {
      const { client, project } = await projectWith(server, [task('t', { steps: [{ command: 'true' }] })]);
      const value = secretValue('at-rest');
      const { data: created } = await create(client, { name: 'kept', kind: 'secret', data: { value } });
      // A deploy replaces the resources of the project, not its identities.
      const deploy = await client.PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id } },
        body: { specs: [] },
      });
      expect(deploy.response.status).toBe(204);
      const kept = await client.GET('/identities/name/{name}', { params: { path: { name: 'kept' } } });
      expect(kept.data).toEqual(created);
      // The identity is in the file (its name is), its value is not: neither in the database nor
      // in its write-ahead log, where the latest commits are.
      const file = server.databaseFile as string;
      const files = [file, `${file}-wal`].filter(existsSync);
      const bytes = Buffer.concat(files.map((file) => readFileSync(file)));
      expect(bytes.includes(Buffer.from('kept'))).toBe(true);
      expect(bytes.includes(Buffer.from(value))).toBe(false);
      expect(bytes.includes(Buffer.from(value.slice(-24)))).toBe(false);
    },
  );
});
