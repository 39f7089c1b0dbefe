import { describe, expect, it } from 'vitest';
import {
  encodeRequest,
  errnoName,
  type FromSpawner,
  frameReader,
  NulByteError,
  signalName,
} from '../../../src/runner/spawner-protocol.js';

/** A frame as spawner-child.c writes it: length of the rest, type, run id, fields. */
function frame(type: number, id: number, fields: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32LE(5 + fields.length, 0);
  head.writeUInt8(type, 4);
  head.writeUInt32LE(id, 5);
  return Buffer.concat([head, fields]);
}

function endFields(kind: number, aborted: number, value: number): Buffer {
  const fields = Buffer.alloc(6);
  fields.writeUInt8(kind, 0);
  fields.writeUInt8(aborted, 1);
  fields.writeInt32LE(value, 2);
  return fields;
}

const spawned = frame(1, 7, Buffer.concat([Buffer.from([0x39, 0x30, 0, 0]), Buffer.from('boot/123')]));
const output = frame(2, 7, Buffer.from('hello\n'));
const ended = frame(3, 7, endFields(1, 1, 15));
const expected: FromSpawner[] = [
  { type: 'spawned', id: 7, pid: 12345, identity: 'boot/123' },
  { type: 'output', id: 7, chunk: Buffer.from('hello\n') },
  { type: 'end', id: 7, end: { kind: 'signaled', signal: 15, aborted: true } },
];

describe('the spawner protocol', () => {
  it('reads frames whole however the stream cuts them, one byte at a time or many frames at once', () => {
    const stream = Buffer.concat([spawned, output, ended]);
    for (const size of [1, 3, 9, 10, stream.length]) {
      const read: FromSpawner[] = [];
      const push = frameReader((message) => read.push(message));
      for (let at = 0; at < stream.length; at += size) push(stream.subarray(at, at + size));
      expect(read).toEqual(expected);
    }
  });

  it('reads each end the spawner reports', () => {
    const read: FromSpawner[] = [];
    const push = frameReader((message) => read.push(message));
    push(frame(3, 1, endFields(0, 0, 3)));
    push(frame(3, 2, endFields(2, 0, 2)));
    push(frame(1, 3, Buffer.from([1, 0, 0, 0])));
    expect(read).toEqual([
      { type: 'end', id: 1, end: { kind: 'exited', exitCode: 3, aborted: false } },
      { type: 'end', id: 2, end: { kind: 'not_started', errno: 2 } },
      { type: 'spawned', id: 3, pid: 1 },
    ]);
  });

  it('refuses a frame of a type it does not know', () => {
    const push = frameReader(() => undefined);
    expect(() => push(frame(9, 1, Buffer.alloc(0)))).toThrow(/unknown type 9/);
  });

  it('lays a start request out as spawner-child.c reads it', () => {
    const request = encodeRequest({
      type: 'start',
      id: 5,
      request: {
        argv: ['/bin/echo', 'é', ''],
        environment: { A: '1', B: 'x=y' },
        cwd: '/tmp',
        graceMs: 1500,
        user: { uid: 2000000001, gid: 2000000001 },
        forwardBytes: Number.POSITIVE_INFINITY,
      },
    });
    expect(request.readUInt32LE(0)).toBe(request.length - 4);
    expect([request.readUInt8(4), request.readUInt32LE(5)]).toEqual([1, 5]);
    expect(request.readUInt32LE(9)).toBe(1500);
    expect(request.readDoubleLE(13)).toBe(Number.POSITIVE_INFINITY);
    expect([request.readUInt8(21), request.readUInt32LE(22), request.readUInt32LE(26)]).toEqual([
      1, 2000000001, 2000000001,
    ]);
    expect([request.readUInt32LE(30), request.readUInt32LE(34)]).toEqual([3, 2]);
    expect(request.subarray(38).toString().split('\0')).toEqual([
      '/tmp',
      '/bin/echo',
      'é',
      '',
      'A=1',
      'B=x=y',
      '',
    ]);
    expect([...encodeRequest({ type: 'abort', id: 5 })]).toEqual([5, 0, 0, 0, 2, 5, 0, 0, 0]);
    expect([...encodeRequest({ type: 'kill', id: 6 })]).toEqual([5, 0, 0, 0, 3, 6, 0, 0, 0]);
  });

  it('sends a grace period too long for its field as the longest one it holds', () => {
    const request = encodeRequest({
      type: 'start',
      id: 1,
      request: { argv: ['/bin/true'], environment: {}, cwd: '/', graceMs: 10_000_000_000, forwardBytes: 10 },
    });
    expect(request.readUInt32LE(9)).toBe(0xffff_ffff);
  });

  it('refuses a string holding a NUL byte, which C would cut short, naming it', () => {
    const start = (environment: Record<string, string>, argv = ['/bin/true']) =>
      encodeRequest({
        type: 'start',
        id: 1,
        request: { argv, environment, cwd: '/', graceMs: 0, forwardBytes: 10 },
      });
    expect(() => start({ BAD: 'a\0b' })).toThrow(NulByteError);
    expect(() => start({ BAD: 'a\0b' })).toThrow('variable BAD must be a string without null bytes');
    expect(() => start({}, ['/bin/true', 'x\0'])).toThrow('argument 1 must be a string without null bytes');
  });

  it('names signals and errno numbers as Node does', () => {
    expect(signalName(9)).toBe('SIGKILL');
    expect(errnoName(2)).toBe('ENOENT');
    expect(errnoName(99999)).toBe('errno 99999');
  });
});
