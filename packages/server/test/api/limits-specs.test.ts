import type { ApiError, Schemas } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, pipeline, projectWith, resourceId, task } from '../helpers/projects.js';
import { startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';

// Limits of resource specs and parameter values that would otherwise only show when a task
// runs, or never: NUL in what reaches a process (C strings end at it), a retention of 1e300.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const NUL_REASON = 'must not contain NUL (U+0000), which a process cannot receive';

async function install(specs: unknown[]) {
  const admin = server.client();
  const { data: project } = await admin.POST('/projects', { body: { name: uniqueName('p') } });
  return admin.PUT('/projects/id/{id}/resources', {
    params: { path: { id: project?.id ?? '' } },
    body: { specs: specs as Schemas['ResourceSpec'][] },
  });
}

/** The problems of a rejected request. */
async function rejection(promise: Promise<unknown>) {
  const error = (await promise.then(
    () => {
      throw new Error('the request was accepted');
    },
    (e: unknown) => e,
  )) as ApiError;
  expect(error).toMatchObject({ status: 400, code: 'invalid_request_body' });
  return (error.data as { jsv_errors: { pointer: string; reason: string }[] }).jsv_errors;
}

const withParameter = (declaration: Record<string, unknown>) =>
  task('t', { parameters: [{ name: 'x', type: 'string', ...declaration }], steps: [{ command: 'true' }] });

describe('installResources', () => {
  it.each([
    ['a program', task('t', { steps: [{ command: 'tr\0ue' }] }), '/data/steps/0/command'],
    [
      'an argument',
      task('t', { steps: [{ command: 'echo', arguments: ['a', 'b\0'] }] }),
      '/data/steps/0/arguments/1',
    ],
    ['a script', task('t', { steps: [{ code: 'echo a\0b' }] }), '/data/steps/0/code'],
    [
      'an environment value',
      task('t', { environment: { OK: 'fine', BAD: 'x\0y' }, steps: [{ command: 'true' }] }),
      '/data/environment/BAD',
    ],
    [
      'a container image',
      task('t', {
        runtime: { name: 'container', parameters: { image: 'node\0' } },
        steps: [{ command: 'true' }],
      }),
      '/data/runtime/parameters/image',
    ],
    ['a parameter default', withParameter({ default: '\0' }), '/data/parameters/0/default'],
    ['a value of a parameter', withParameter({ values: ['a', 'b\0'] }), '/data/parameters/0/values/1'],
    [
      'a command parameter default',
      command('c', ['p'], [{ name: 'x', type: 'string', default: 'a\0' }]),
      '/data/parameters/0/default',
    ],
  ])('refuses NUL in %s, naming the field', async (_case, spec, at) => {
    const specs = [spec, task('other', { steps: [{ command: 'true' }] }), pipeline('p', [{ task: 'other' }])];
    expect(await rejection(install(specs))).toEqual([{ pointer: `/specs/0${at}`, reason: NUL_REASON }]);
  });

  it('refuses NUL in a parameter value a pipeline gives its task', async () => {
    const problems = await rejection(
      install([withParameter({}), pipeline('p', [{ task: 't', parameters: { x: 'a\0' } }])]),
    );
    expect(problems).toEqual([{ pointer: '/specs/1/data/tasks/0/parameters/x', reason: NUL_REASON }]);
  });

  it('takes every other character where NUL is refused', async () => {
    const text = 'tab\there, new\nline, \u0001, \u007f, é ✓';
    const { response } = await install([
      task('t', {
        environment: { TEXT: text },
        parameters: [{ name: 'x', type: 'string', values: [text], default: text }],
        steps: [{ command: 'printf', arguments: ['%s', text] }, { code: `echo '${text}'` }],
      }),
      pipeline('p', [{ task: 't', parameters: { x: text } }]),
    ]);
    expect(response.status).toBe(204);
  });

  it('bounds retention to 36500 days, and refuses 36501 and 1e300', async () => {
    const kept = (retention: number) => pipeline('p', [{ task: 't' }], { retention });
    const base = task('t', { steps: [{ command: 'true' }] });
    expect((await install([base, kept(36500)])).response.status).toBe(204);
    for (const retention of [36501, 1e300]) {
      expect(await rejection(install([base, kept(retention)]))).toEqual([
        { pointer: '/specs/1/data/retention', reason: 'must be at most 36500' },
      ]);
    }
  });
});

describe('executeCommand', () => {
  it('refuses a parameter value with NUL, naming it, and starts nothing', async () => {
    const { client } = await projectWith(server, [
      task('t', { steps: [{ command: 'true' }] }),
      pipeline('p', [{ task: 't' }]),
      command('go', ['p'], [{ name: 'version', type: 'string', environment: 'VERSION' }]),
    ]);
    const id = await resourceId(client, 'command', 'go');
    const problems = await rejection(
      client.POST('/commands/id/{id}/execute', {
        params: { path: { id } },
        body: { parameters: { version: '1.0\0' } },
      }),
    );
    expect(problems.map((p) => p.pointer)).toEqual(['/parameters/version']);
    const { data } = await client.GET('/pipelines', {});
    expect(data?.elements).toEqual([]);
  });
});
