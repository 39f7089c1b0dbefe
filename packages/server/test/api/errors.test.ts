import { describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/raw.js';
import { sharedTestServer, startTestServer, uniqueName } from '../helpers/test-server.js';

// Errors every route shares: the error object, unknown routes and methods, the query
// cursor, the project header, body limits and the rate limit.

const server = sharedTestServer({ bodyLimitBytes: 4096 });

const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
  rawRequest(server.baseUrl, server.ca, {
    method,
    path,
    headers: { authorization: `Bearer ${server.adminKey}`, ...headers },
    ...(body === undefined ? {} : { body }),
  });

function expectErrorObject(answer: Awaited<ReturnType<typeof send>>, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.json).toMatchObject({ code, error: expect.any(String) });
}

describe('unknown routes and methods', () => {
  it.each(['/v0/nothing', '/v1/status', '/', '/v0/projects/id/2Fv9zQx0bY3kLmN8pQrStUvWxYz/nothing'])(
    'answers route_not_found with the target for %s',
    async (path) => {
      const answer = await send('GET', path);
      expectErrorObject(answer, 404, 'route_not_found');
      expect(answer.json?.data).toEqual({ target: path });
    },
  );

  it('answers method_not_allowed with an Allow header', async () => {
    const answer = await send('PATCH', '/v0/projects');
    expectErrorObject(answer, 405, 'method_not_allowed');
    expect(String(answer.headers.allow).split(/, */).sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
  });
});

describe('cursor query parameters', () => {
  it.each([
    ['size above 100', 'size=101', 'size'],
    ['a negative size', 'size=-1', 'size'],
    ['a size that is no number', 'size=ten', 'size'],
    ['an unknown sort', 'sort=colour', 'sort'],
    ['an unknown order', 'order=up', 'order'],
    ['an unknown parameter', 'colour=red', 'colour'],
    ['a key that is not one', 'after=%21%21', 'after'],
    ['a forged key', `after=${Buffer.from('["id",1,2,0]').toString('base64url')}`, 'after'],
    ['both after and before', 'after=abc&before=abc', 'before'],
  ])('answers invalid_query_parameter to %s', async (_case, query, parameter) => {
    const answer = await send('GET', `/v0/projects?${query}`);
    expectErrorObject(answer, 400, 'invalid_query_parameter');
    expect(answer.json?.data).toMatchObject({ parameter, reason: expect.any(String) });
  });

  it('accepts size 0 and 100', async () => {
    expect((await send('GET', '/v0/projects?size=0')).status).toBe(200);
    expect((await send('GET', '/v0/projects?size=100')).status).toBe(200);
  });
});

describe('the project header', () => {
  it('answers missing_project_id on a project route without it', async () => {
    expectErrorObject(await send('GET', '/v0/resources'), 400, 'missing_project_id');
  });

  it("answers unknown_project for another organization's project, or an id that is none", async () => {
    const other = server.client(await server.newOrganization());
    const { data } = await other.POST('/projects', { body: { name: uniqueName('p') } });
    expectErrorObject(
      await send('GET', '/v0/pipelines', { 'x-service-project-id': data?.id ?? '' }),
      404,
      'unknown_project',
    );
    expectErrorObject(
      await send('GET', '/v0/pipelines', { 'x-service-project-id': 'nonsense' }),
      404,
      'unknown_project',
    );
  });

  it('is not needed on routes outside projects', async () => {
    expect((await send('GET', '/v0/projects')).status).toBe(200);
  });
});

describe('request bodies', () => {
  it('answers request_body_too_large above the limit', async () => {
    const body = JSON.stringify({ name: 'a'.repeat(5000) });
    expectErrorObject(
      await send('POST', '/v0/projects', { 'content-type': 'application/json' }, body),
      413,
      'request_body_too_large',
    );
  });

  it('answers invalid_request_body when the body is missing', async () => {
    expectErrorObject(
      await send('POST', '/v0/projects', { 'content-type': 'application/json' }),
      400,
      'invalid_request_body',
    );
  });
});

describe('rate limit', () => {
  it('answers rate_limited with Retry-After past the burst', async () => {
    const limited = await startTestServer({ rateLimit: { perSecond: 1, burst: 3 } });
    try {
      const statuses = [];
      let last: Awaited<ReturnType<typeof rawRequest>> | undefined;
      for (let i = 0; i < 5; i += 1) {
        last = await rawRequest(limited.baseUrl, limited.ca, {
          method: 'GET',
          path: '/v0/status',
          headers: { authorization: `Bearer ${limited.adminKey}` },
        });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses.at(-1)).toBe(429);
      expect(last?.json).toMatchObject({ code: 'rate_limited' });
      expect(Number(last?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });
});
