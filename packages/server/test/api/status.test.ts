import { ApiError } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/raw.js';
import { sharedTestServer } from '../helpers/test-server.js';

const server = sharedTestServer();

describe('getStatus', () => {
  it('answers an empty JSON object', async () => {
    const { data, response } = await server.client().GET('/status');
    expect(response.status).toBe(200);
    expect(data).toEqual({});
  });

  it('needs an API key like every route', async () => {
    const answer = await rawRequest(server.baseUrl, server.ca, { method: 'GET', path: '/v0/status' });
    expect(answer.status).toBe(401);
    expect(answer.json).toMatchObject({ code: 'authentication_required' });
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  it('rejects an unknown key with invalid_api_key', async () => {
    const forged = `pwk_${'0'.repeat(27)}_${'a'.repeat(43)}`;
    const error = await server
      .client(forged)
      .GET('/status')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect((error as ApiError).headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('rejects a key whose secret is wrong', async () => {
    const wrong = `${server.adminKey.slice(0, -3)}abc`;
    await expect(server.client(wrong).GET('/status')).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
  });

  it.each(['Basic abc', 'Bearer', 'bearer'])(
    'answers authentication_required to "Authorization: %s"',
    async (value) => {
      const answer = await rawRequest(server.baseUrl, server.ca, {
        method: 'GET',
        path: '/v0/status',
        headers: { authorization: value },
      });
      expect(answer.status).toBe(401);
      expect(answer.json).toMatchObject({ code: 'authentication_required' });
    },
  );
});

describe('headStatus', () => {
  it('answers 200 without a body', async () => {
    const answer = await rawRequest(server.baseUrl, server.ca, {
      method: 'HEAD',
      path: '/v0/status',
      headers: { authorization: `Bearer ${server.adminKey}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('');
  });
});
