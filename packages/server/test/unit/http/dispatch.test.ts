import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/domain/errors.js';
import { dispatch } from '../../../src/http/dispatch.js';
import { errorHandler } from '../../../src/http/errors.js';
import { silentLogger } from '../../../src/logger.js';

const noop = () => {};
const document = {
  paths: {
    '/status': { parameters: [], get: { operationId: 'getStatus' }, head: { operationId: 'headStatus' } },
  },
};

describe('dispatch', () => {
  it('accepts handlers that match the operations of the spec exactly', () => {
    expect(() => dispatch({ getStatus: noop, headStatus: noop }, document)).not.toThrow();
  });

  it.each([
    ['a missing handler', { getStatus: noop }, /no handler for \[headStatus\]/],
    [
      'a handler of no operation',
      { getStatus: noop, headStatus: noop, getOther: noop },
      /no operation for \[getOther\]/,
    ],
  ])('refuses %s when the app is made', (_case, handlers, message) => {
    expect(() => dispatch(handlers, document)).toThrow(message);
  });

  it('gives the error handler what a handler throws, before or after it awaits', async () => {
    const refusal = () => new DomainError('unknown_task', 'no task t', { id: 't' });
    const answers = async (getStatus: RequestHandler) => {
      const app = express();
      app.use((req, _res, next) => {
        Object.assign(req, { openapi: { schema: { operationId: 'getStatus' }, pathParams: {} } });
        next();
      });
      app.use(dispatch({ getStatus, headStatus: noop }, document));
      app.use(errorHandler(silentLogger));
      const server = app.listen(0, '127.0.0.1');
      try {
        await new Promise((resolve) => server.once('listening', resolve));
        const { port } = server.address() as AddressInfo;
        const response = await fetch(`http://127.0.0.1:${port}/status`);
        return { status: response.status, body: await response.json() };
      } finally {
        server.close();
      }
    };
    const thrown = await answers(() => {
      throw refusal();
    });
    expect(thrown).toEqual({
      status: 404,
      body: { error: 'no task t', code: 'unknown_task', data: { id: 't' } },
    });
    expect(
      await answers(async () => {
        await Promise.resolve();
        throw refusal();
      }),
    ).toEqual(thrown);
  });
});
