import type { Schemas } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseParameters } from '../../src/parameters.js';

const PARAMETERS: Schemas['CommandParameter'][] = [
  { name: 'version', type: 'string' },
  { name: 'count', type: 'number', default: 1 },
  { name: 'dry', type: 'boolean', default: true },
  { name: 'channel', type: 'string', values: ['stable', 'beta'], default: 'beta' },
];

describe('parseParameters', () => {
  it.each([
    [['version=1.0'], { version: '1.0' }],
    [['version=', 'count=-2.5'], { version: '', count: -2.5 }],
    [['version=a=b', 'dry=false', 'channel=stable'], { version: 'a=b', dry: false, channel: 'stable' }],
    [['version=x', 'count=1e3', 'dry=true'], { version: 'x', count: 1000, dry: true }],
  ])('reads %j by the declared types', (args, values) => {
    expect(parseParameters('release', PARAMETERS, args)).toEqual(values);
  });

  it.each([
    [['count=2'], 'command release requires version=VALUE'],
    [['version=1', 'count='], 'parameter count is a number: "" is not one'],
    [['version=1', 'count=Infinity'], 'parameter count is a number: "Infinity" is not one'],
    [['version=1', 'dry=1'], 'parameter dry is a boolean: true or false, not "1"'],
    [['version=1', 'channel=nightly'], 'parameter channel must be one of stable, beta, not "nightly"'],
    [['version=1', 'version=2'], 'parameter version is given twice'],
    [['=1'], '"=1" is not KEY=VALUE'],
    [['nope=1'], 'command release has no parameter nope'],
  ])('refuses %j', (args, message) => {
    expect(() => parseParameters('release', PARAMETERS, args)).toThrow(UsageError);
    expect(() => parseParameters('release', PARAMETERS, args)).toThrow(message);
  });
});
