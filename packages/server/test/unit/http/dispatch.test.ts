import { describe, expect, it } from 'vitest';
import { dispatch } from '../../../src/http/dispatch.js';

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
});
