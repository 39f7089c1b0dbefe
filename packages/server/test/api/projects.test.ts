import { walk } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/raw.js';
import { cursorQuery, sharedTestServer, uniqueName } from '../helpers/test-server.js';

const server = sharedTestServer();

async function createProject(name = uniqueName('p'), apiKey = server.adminKey) {
  const { data } = await server.client(apiKey).POST('/projects', { body: { name } });
  if (!data) throw new Error('no project');
  return data;
}

function userKey(): Promise<string> {
  return server.newAccount('default', 'user');
}

describe('createProject', () => {
  it('creates a project in the organization of the key and answers 201', async () => {
    const name = uniqueName('web');
    const { data, response } = await server.client().POST('/projects', { body: { name } });
    expect(response.status).toBe(201);
    const org = await server.client().GET('/org');
    expect(data).toEqual({ id: expect.stringMatching(/^[0-9A-Za-z]{27}$/), org_id: org.data?.id, name });
  });

  it('answers duplicate_project_name for a name taken in the organization', async () => {
    const project = await createProject();
    await expect(server.client().POST('/projects', { body: { name: project.name } })).rejects.toMatchObject({
      status: 409,
      code: 'duplicate_project_name',
    });
  });

  it('lets another organization use the same name', async () => {
    const project = await createProject();
    const other = await createProject(project.name, await server.newOrganization());
    expect(other.id).not.toBe(project.id);
  });

  it('answers permission_denied to a user account', async () => {
    await expect(
      server.client(await userKey()).POST('/projects', { body: { name: uniqueName('p') } }),
    ).rejects.toMatchObject({
      status: 403,
      code: 'permission_denied',
    });
  });

  it.each([
    ['an invalid name', { name: 'Not A Name' }, '/name'],
    ['a name too long', { name: 'a'.repeat(101) }, '/name'],
    ['no name', {}, '/name'],
    ['an unknown field', { name: 'ok', colour: 'red' }, '/colour'],
  ])('answers invalid_request_body with a pointer for %s', async (_case, body, pointer) => {
    const error = await server
      .client()
      .POST('/projects', { body: body as { name: string } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request_body' });
    const jsvErrors = (error as { data: { jsv_errors: { pointer: string; reason: string }[] } }).data
      .jsv_errors;
    expect(jsvErrors.map((e) => e.pointer)).toContain(pointer);
    expect(jsvErrors.every((e) => e.reason.length > 0)).toBe(true);
  });

  it('reports every problem of a body at once', async () => {
    const error = await server
      .client()
      .POST('/projects', { body: { name: 'BAD', extra: 1, more: 2 } as unknown as { name: string } })
      .catch((e: unknown) => e);
    const pointers = (error as { data: { jsv_errors: { pointer: string }[] } }).data.jsv_errors.map(
      (e) => e.pointer,
    );
    expect(pointers).toEqual(expect.arrayContaining(['/name', '/extra', '/more']));
  });

  it('answers invalid_json to malformed JSON, unsupported_media_type to text, and stores nothing', async () => {
    const headers = { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' };
    const malformed = await rawRequest(server.baseUrl, server.ca, {
      method: 'POST',
      path: '/v0/projects',
      headers,
      body: '{"name": "broken"',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ code: 'invalid_json' });
    const text = await rawRequest(server.baseUrl, server.ca, {
      method: 'POST',
      path: '/v0/projects',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: 'broken',
    });
    expect(text.status).toBe(415);
    expect(text.json).toMatchObject({ code: 'unsupported_media_type' });
    await expect(
      server.client().GET('/projects/name/{name}', { params: { path: { name: 'broken' } } }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('getProject', () => {
  it('answers a project by id', async () => {
    const project = await createProject();
    const { data } = await server.client().GET('/projects/id/{id}', { params: { path: { id: project.id } } });
    expect(data).toEqual(project);
  });

  it("answers unknown_project for another organization's project", async () => {
    const project = await createProject();
    await expect(
      server
        .client(await server.newOrganization())
        .GET('/projects/id/{id}', { params: { path: { id: project.id } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_project' });
  });
});

describe('getProjectByName', () => {
  it('answers a project by name', async () => {
    const project = await createProject();
    const { data } = await server
      .client()
      .GET('/projects/name/{name}', { params: { path: { name: project.name } } });
    expect(data).toEqual(project);
  });

  it('answers unknown_project for a name not in the organization', async () => {
    const project = await createProject(uniqueName('p'), await server.newOrganization());
    await expect(
      server.client().GET('/projects/name/{name}', { params: { path: { name: project.name } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_project' });
  });
});

describe('getProjectByNameShortForm', () => {
  it('answers a project by name at /projects/{name}', async () => {
    const project = await createProject();
    const { data } = await server
      .client()
      .GET('/projects/{name}', { params: { path: { name: project.name } } });
    expect(data).toEqual(project);
  });
});

describe('updateProject', () => {
  it('renames a project', async () => {
    const project = await createProject();
    const name = uniqueName('renamed');
    const { data } = await server.client().PUT('/projects/id/{id}', {
      params: { path: { id: project.id } },
      body: { name },
    });
    expect(data).toEqual({ ...project, name });
    const read = await server.client().GET('/projects/name/{name}', { params: { path: { name } } });
    expect(read.data?.id).toBe(project.id);
  });

  it('answers duplicate_project_name and keeps the old name', async () => {
    const [a, b] = [await createProject(), await createProject()];
    await expect(
      server.client().PUT('/projects/id/{id}', { params: { path: { id: a.id } }, body: { name: b.name } }),
    ).rejects.toMatchObject({ status: 409, code: 'duplicate_project_name' });
    const read = await server.client().GET('/projects/id/{id}', { params: { path: { id: a.id } } });
    expect(read.data?.name).toBe(a.name);
  });

  it('answers permission_denied to a user and unknown_project across organizations', async () => {
    const project = await createProject();
    const rename = (key: string) =>
      server
        .client(key)
        .PUT('/projects/id/{id}', { params: { path: { id: project.id } }, body: { name: uniqueName('x') } });
    await expect(rename(await userKey())).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
    await expect(rename(await server.newOrganization())).rejects.toMatchObject({
      status: 404,
      code: 'unknown_project',
    });
  });
});

describe('deleteProject', () => {
  it('deletes a project and answers 204', async () => {
    const project = await createProject();
    const { response } = await server
      .client()
      .DELETE('/projects/id/{id}', { params: { path: { id: project.id } } });
    expect(response.status).toBe(204);
    await expect(
      server.client().GET('/projects/id/{id}', { params: { path: { id: project.id } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_project' });
  });

  it('answers permission_denied to a user, unknown_project across organizations, and keeps the project', async () => {
    const project = await createProject();
    const remove = (key: string) =>
      server.client(key).DELETE('/projects/id/{id}', { params: { path: { id: project.id } } });
    await expect(remove(await userKey())).rejects.toMatchObject({ status: 403, code: 'permission_denied' });
    await expect(remove(await server.newOrganization())).rejects.toMatchObject({
      status: 404,
      code: 'unknown_project',
    });
    const read = await server.client().GET('/projects/id/{id}', { params: { path: { id: project.id } } });
    expect(read.data).toEqual(project);
  });
});

describe('listProjects', () => {
  it("walks the organization's projects by name in both orders, and none of another's", async () => {
    const apiKey = await server.newOrganization();
    const names = ['delta', 'alpha', 'echo', 'charlie', 'bravo'];
    for (const name of names) await createProject(name, apiKey);
    await createProject('alpha', await server.newOrganization());
    const client = server.client(apiKey);

    const ascending = [];
    for await (const p of walk(client, '/projects', { sort: 'name', size: 2 })) ascending.push(p.name);
    expect(ascending).toEqual([...names].sort());
    const descending = [];
    for await (const p of walk(client, '/projects', { sort: 'name', order: 'desc', size: 3 }))
      descending.push(p.name);
    expect(descending).toEqual([...names].sort().reverse());

    const first = await client.GET('/projects', { params: { query: { sort: 'name', size: 2 } } });
    expect(first.data?.previous).toBeUndefined();
    const second = await client.GET('/projects', { params: { query: cursorQuery(first.data?.next) } });
    expect(second.data?.elements.map((p) => p.name)).toEqual(['charlie', 'delta']);
    const back = await client.GET('/projects', { params: { query: cursorQuery(second.data?.previous) } });
    expect(back.data?.elements).toEqual(first.data?.elements);
    expect(back.data?.previous).toBeUndefined();
  });

  it('answers an empty page to an organization without projects', async () => {
    const { data } = await server.client(await server.newOrganization()).GET('/projects');
    expect(data).toEqual({ elements: [] });
  });
});
