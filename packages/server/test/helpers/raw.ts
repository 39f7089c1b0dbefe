import { Agent, request } from 'undici';

/**
 * A request outside the typed client, for what the client cannot send on purpose:
 * malformed JSON, wrong content types, unknown routes and methods, missing headers.
 */
export async function rawRequest(
  baseUrl: string,
  ca: string | undefined,
  init: { method: string; path: string; headers?: Record<string, string>; body?: string },
) {
  const dispatcher = new Agent({ connect: { ca, rejectUnauthorized: ca !== undefined } });
  const response = await request(`${baseUrl}${init.path}`, {
    method: init.method as 'GET',
    headers: init.headers ?? {},
    body: init.body ?? null,
    dispatcher,
  });
  const text = await response.body.text();
  await dispatcher.close();
  const contentType = String(response.headers['content-type'] ?? '');
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    json:
      contentType.includes('application/json') && text
        ? (JSON.parse(text) as Record<string, unknown>)
        : undefined,
  };
}
