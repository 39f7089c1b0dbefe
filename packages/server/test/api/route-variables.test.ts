import { describe, expect, it } from 'vitest';
import { sharedTestServer, uniqueName } from '../helpers/test-server.js';

const server = sharedTestServer();

/** A client working in a new, empty project: the project routes need one. */
async function projectClient() {
  const { data: project } = await server.client().POST('/projects', { body: { name: uniqueName('p') } });
  if (!project) throw new Error('no project');
  return server.client(server.adminKey, project.id);
}

describe('malformed identifiers in paths', () => {
  it.each([
    ['/accounts/id/{id}', 'an account'],
    ['/projects/id/{id}', 'a project'],
    ['/resources/id/{id}', 'a resource'],
    ['/command_executions/id/{id}', 'a command execution'],
    ['/pipelines/id/{id}', 'a pipeline'],
    ['/tasks/id/{id}', 'a task'],
    ['/tasks/id/{id}/steps', 'a task'],
    ['/events/id/{id}', 'an event'],
  ] as const)('GET %s answers "not %s id", with invalid_route_variable', async (path, kind) => {
    const client = await projectClient();
    await expect(client.GET(path, { params: { path: { id: '123' } } })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_route_variable',
      message: `not ${kind} id: 123`,
      data: { variable: 'id' },
    });
  });

  it('says which id on POST routes too, and shows an odd value escaped and cut', async () => {
    const client = await projectClient();
    await expect(
      client.POST('/pipelines/id/{id}/abort', { params: { path: { id: 'a\nb' } } }),
    ).rejects.toMatchObject({ code: 'invalid_route_variable', message: 'not a pipeline id: a\\nb' });
    await expect(
      client.POST('/commands/id/{id}/execute', { params: { path: { id: 'x'.repeat(300) } }, body: {} }),
    ).rejects.toMatchObject({ message: `not a command id: ${'x'.repeat(100)}...` });
  });

  it('keeps the general message for route variables that are not ids', async () => {
    const client = await projectClient();
    await expect(
      client.GET('/resources/type/{type}/name/{name}', {
        params: { path: { type: 'task', name: 'Bad Name' } },
      }),
    ).rejects.toMatchObject({
      code: 'invalid_route_variable',
      message: expect.stringMatching(/^invalid route variable name: /),
    });
  });
});
