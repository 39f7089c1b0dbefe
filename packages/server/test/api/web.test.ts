import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/raw.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// The dashboard's files as the server serves them: a stand-in build (apps/web has its own
// browser tests of the real one).
const PAGE =
  '<!doctype html><title>Pipewright</title><script type="module" src="/assets/app-1a2b.js"></script>';
const SCRIPT = 'console.log("app");';

let server: TestServer;
let root: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pipewright-web-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), PAGE);
  writeFileSync(join(root, 'assets', 'app-1a2b.js'), SCRIPT);
  writeFileSync(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  server = await startTestServer({ webRoot: root });
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

const get = (path: string, method = 'GET') => rawRequest(server.baseUrl, server.ca, { method, path });

describe('web dashboard', () => {
  it('serves the page at / without an API key, with a strict Content-Security-Policy', async () => {
    const answer = await get('/');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.text).toBe(PAGE);
    const csp = String(answer.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(answer.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
  });

  it('answers a route of the app with the page (SPA fallback), HEAD included', async () => {
    for (const path of [
      '/projects/web-shop/pipelines',
      '/p/x/tasks/2Fz2gT7qAb3cDe4fGh5iJk6lMn7?tab=output',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.text).toBe(PAGE);
    }
    const head = await get('/projects/web-shop', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('serves hashed assets for a year and other files with revalidation', async () => {
    const script = await get('/assets/app-1a2b.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.text).toBe(SCRIPT);
    const icon = await get('/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('answers a missing file with route_not_found, not with the page', async () => {
    const answer = await get('/assets/missing-0000.js');
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ code: 'route_not_found' });
  });

  it('never serves files outside its directory', async () => {
    const answer = await get('/..%2F..%2Fetc%2Fpasswd.txt');
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.text).not.toContain('root:');
  });

  it('leaves /v0 to the API: no page there, an API key still required', async () => {
    for (const path of ['/v0', '/v0/status', '/v0/no/such/route']) {
      const answer = await get(path);
      expect(answer.status, path).toBe(401);
      expect(answer.json).toMatchObject({ code: 'authentication_required' });
      expect(answer.headers['content-security-policy']).toBeUndefined();
    }
  });

  it('leaves other methods to the API', async () => {
    const answer = await get('/', 'POST');
    expect(answer.status).toBe(401);
    expect(answer.json).toMatchObject({ code: 'authentication_required' });
  });
});
