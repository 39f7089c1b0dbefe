import { constants } from 'node:os';
import type { TaskUser } from './task-users.js';

/**
 * The frames between the server (spawner.ts) and its spawner process (spawner-child.c), which
 * spawns and owns the step processes. Requests go to its stdin, reports come from its stdout.
 * Each frame is the length of the rest (u32), a type (u8), the id of the run it is about (u32),
 * then the type's fields; numbers are little-endian, strings end with a NUL byte. The type
 * numbers and layouts here and in spawner-child.c are one protocol: change both together.
 */

/** How to start one step process. */
export interface StartRequest {
  /** argv[0] is the path of an executable. */
  argv: string[];
  /** The process's whole environment. */
  environment: Record<string, string>;
  cwd: string;
  /** After an abort's SIGTERM, how long the group has before SIGKILL. */
  graceMs: number;
  /** The user and group the process runs as, with no supplementary groups; the spawner's own when absent. */
  user?: TaskUser;
  /** Output sent back at most, in bytes (Infinity: all): the rest is read (the process never blocks on it) and dropped. */
  forwardBytes: number;
}

export type ToSpawner =
  | { type: 'start'; id: number; request: StartRequest }
  /** SIGTERM to the group, SIGKILL after graceMs unless the output has closed by then. */
  | { type: 'abort'; id: number }
  /** SIGKILL to the group now (the server could not take the output). */
  | { type: 'kill'; id: number };

export type FromSpawner =
  /**
   * The process runs: `pid` is also its process group id, `identity` says who its leader is
   * (process-identity.ts). Sent once it has run a while or before its first output, whichever
   * comes first: a step that ends at once costs no frame more.
   */
  | { type: 'spawned'; id: number; pid: number; identity?: string }
  | { type: 'output'; id: number; chunk: Buffer }
  /** The last frame of a run: the process has exited and its output is closed, or it never started. */
  | { type: 'end'; id: number; end: SpawnerEnd };

/** How a run ended, as the spawner reports it: errno and signal numbers are for spawner.ts to name. */
export type SpawnerEnd =
  | { kind: 'exited'; exitCode: number; aborted: boolean }
  | { kind: 'signaled'; signal: number; aborted: boolean }
  | { kind: 'not_started'; errno: number };

const TO_TYPES = { start: 1, abort: 2, kill: 3 } as const;
const FROM_SPAWNED = 1;
const FROM_OUTPUT = 2;
const FROM_END = 3;
const END_KINDS = ['exited', 'signaled', 'not_started'] as const;

/** Length, type and run id. */
const HEADER_BYTES = 9;
/** start's fixed fields: graceMs, forwardBytes, hasUser, uid, gid, argc, envc. */
const START_FIELDS_BYTES = 29;

const MAX_U32 = 0xffff_ffff;

/** Thrown for a string the spawner cannot pass on: C strings end at the first NUL byte. */
export class NulByteError extends Error {}

function cString(value: string, what: string): string {
  if (value.includes('\0')) throw new NulByteError(`${what} must be a string without null bytes`);
  return `${value}\0`;
}

/** The frame of a request. Throws NulByteError for a string that holds a NUL byte. */
export function encodeRequest(message: ToSpawner): Buffer {
  if (message.type !== 'start') {
    const frame = Buffer.allocUnsafe(HEADER_BYTES);
    frame.writeUInt32LE(HEADER_BYTES - 4, 0);
    frame.writeUInt8(TO_TYPES[message.type], 4);
    frame.writeUInt32LE(message.id, 5);
    return frame;
  }
  const { request } = message;
  const environment = Object.entries(request.environment);
  const strings = [
    cString(request.cwd, 'the working directory'),
    ...request.argv.map((argument, i) => cString(argument, `argument ${i}`)),
    ...environment.map(([name, value]) => cString(`${name}=${value}`, `variable ${name}`)),
  ].join('');
  const stringBytes = Buffer.byteLength(strings);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + START_FIELDS_BYTES + stringBytes);
  frame.writeUInt32LE(frame.length - 4, 0);
  frame.writeUInt8(TO_TYPES.start, 4);
  frame.writeUInt32LE(message.id, 5);
  let at = HEADER_BYTES;
  // u32: a grace of 49 days or more is as good as none (--abort-grace takes any number of seconds).
  at = frame.writeUInt32LE(Math.min(request.graceMs, MAX_U32), at);
  at = frame.writeDoubleLE(request.forwardBytes, at);
  at = frame.writeUInt8(request.user ? 1 : 0, at);
  at = frame.writeUInt32LE(request.user?.uid ?? 0, at);
  at = frame.writeUInt32LE(request.user?.gid ?? 0, at);
  at = frame.writeUInt32LE(request.argv.length, at);
  at = frame.writeUInt32LE(environment.length, at);
  frame.write(strings, at);
  return frame;
}

/**
 * Reads the spawner's frames from a byte stream: push each chunk as it comes, and each whole
 * frame is handed to `onFrame`.
 */
export function frameReader(onFrame: (message: FromSpawner) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    let buffer = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (buffer.length >= 4) {
      const size = buffer.readUInt32LE(0);
      if (buffer.length < 4 + size) break;
      onFrame(decodeFrame(buffer.subarray(4, 4 + size)));
      buffer = buffer.subarray(4 + size);
    }
    // A copy, so that a short rest does not hold on to a large chunk.
    pending = buffer.length === 0 ? buffer : Buffer.from(buffer);
  };
}

function decodeFrame(frame: Buffer): FromSpawner {
  const type = frame.readUInt8(0);
  const id = frame.readUInt32LE(1);
  const body = frame.subarray(5);
  switch (type) {
    case FROM_SPAWNED: {
      const identity = body.toString('latin1', 4);
      return { type: 'spawned', id, pid: body.readUInt32LE(0), ...(identity ? { identity } : {}) };
    }
    case FROM_OUTPUT:
      return { type: 'output', id, chunk: body };
    case FROM_END: {
      const kind = END_KINDS[body.readUInt8(0)];
      const aborted = body.readUInt8(1) === 1;
      const value = body.readInt32LE(2);
      if (kind === 'exited') return { type: 'end', id, end: { kind, exitCode: value, aborted } };
      if (kind === 'signaled') return { type: 'end', id, end: { kind, signal: value, aborted } };
      if (kind === 'not_started') return { type: 'end', id, end: { kind, errno: value } };
    }
  }
  throw new Error(`the step spawner sent a frame of unknown type ${type}`);
}

const signalNames = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));
const errnoNames = new Map(Object.entries(constants.errno).map(([name, number]) => [number, name]));

/** The name of a signal number, as Node names it ('SIGKILL'). */
export function signalName(signal: number): NodeJS.Signals {
  return (signalNames.get(signal) ?? `SIG${signal}`) as NodeJS.Signals;
}

/** The name of an errno number ('ENOENT'). */
export function errnoName(errno: number): string {
  return errnoNames.get(errno) ?? `errno ${errno}`;
}
