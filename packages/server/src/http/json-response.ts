import type { Express, Response } from 'express';

/** The media type of every JSON response: RFC 8259 §11 defines no charset parameter for it. */
const JSON_MEDIA_TYPE = 'application/json';

/**
 * Makes `res.json` of every response of `app` (successes and errors alike) send exactly
 * `Content-Type: application/json`. Express's own adds `; charset=utf-8`, which clients that
 * compare the media type exactly refuse. Set on the app's response prototype, once.
 */
export function sendJsonAsApplicationJson(app: Express): void {
  app.response.json = function json(this: Response, body: unknown) {
    // The services answer with promises: one passed here unawaited would be sent as `{}`.
    if (typeof (body as { then?: unknown } | null)?.then === 'function') {
      throw new Error('res.json was given a promise: await it first');
    }
    // setHeader, not res.set or res.type: those add the charset back.
    this.setHeader('Content-Type', JSON_MEDIA_TYPE);
    // A Buffer, not a string: res.send adds a charset to the type of a string body too.
    return this.send(Buffer.from(JSON.stringify(body)));
  };
}
