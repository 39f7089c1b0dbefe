import { describe, expect, it } from 'vitest';
import { toOriginForm } from '../../../src/http/request-target.js';

describe('toOriginForm', () => {
  it.each([
    // [target as sent, origin-form, authority]
    ['/v0/status', '/v0/status', undefined],
    ['/v0/projects?size=2&sort=name', '/v0/projects?size=2&sort=name', undefined],
    ['https://localhost:8443/v0/status', '/v0/status', 'localhost:8443'],
    ['HTTPS://Example.test/v0/org?x=%41', '/v0/org?x=%41', 'Example.test'],
    ['http://[::1]:8080/v0/status', '/v0/status', '[::1]:8080'],
    ['https://host:1', '/', 'host:1'],
    ['https://host:1?size=1', '/?size=1', 'host:1'],
    // Unreserved characters are themselves, in either case of hex; others stay encoded.
    ['/v0/projects/name/a%2Db', '/v0/projects/name/a-b', undefined],
    ['/v0/%70rojects/name/a%2d%2E%5F%7e%30%5A', '/v0/projects/name/a-._~0Z', undefined],
    ['/v0/scratchpad/key/%E2%9C%93%2F%20%25', '/v0/scratchpad/key/%E2%9C%93%2F%20%25', undefined],
    ['https://h/v0/projects/name/a%2Db?name=a%2Db', '/v0/projects/name/a-b?name=a%2Db', 'h'],
    // Not absolute-form targets of this server: left as they came.
    ['https://user:secret@host/v0/status', 'https://user:secret@host/v0/status', undefined],
    ['ftp://host/v0/status', 'ftp://host/v0/status', undefined],
    ['*', '*', undefined],
    ['v0/status', 'v0/status', undefined],
  ])('%s is %s', (target, origin, authority) => {
    expect(toOriginForm(target)).toEqual({
      target: origin,
      ...(authority !== undefined ? { authority } : {}),
    });
  });
});
