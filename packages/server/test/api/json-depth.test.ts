import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWith } from '../helpers/projects.js';
import { startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';

// A JSON body nests at most 100 levels of arrays and objects (http/json-body.ts): deeper, it is
// refused with a pointer to the first value past the limit.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `levels` objects, each the only value of the one around it, under the key `${i}/~`, i its depth in them. */
function nestedObjects(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { value: 1 };
  for (let i = levels - 2; i >= 0; i--) value = { [`${i}/~`]: value };
  return value;
}

/** `levels` arrays, each the only element of the one around it. */
function nestedArrays(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe('JSON bodies nested deep', () => {
  // The body is level 1 and its `data`, an object, level 2: `data` may hold 98 levels more.
  it.each([
    [
      'objects',
      (levels: number) => nestedObjects(levels + 1),
      `/data${Array.from({ length: 99 }, (_, i) => `/${i}~1~0`).join('')}`,
    ],
    ['arrays', (levels: number) => ({ list: nestedArrays(levels) }), `/data/list${'/0'.repeat(98)}`],
  ])('takes %s 100 levels deep, and refuses one more at its pointer', async (_, data, pointer) => {
    const { client } = await projectWith(server, []);
    const send = (levels: number) =>
      client.POST('/events', { body: { connector: 'custom', name: uniqueName('deep'), data: data(levels) } });
    expect((await send(98)).response.status).toBe(201);
    await expect(send(99)).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request_body',
      data: { jsv_errors: [{ pointer, reason: 'nests arrays and objects more than 100 levels deep' }] },
    });
  });
});
