import type { ProcessEnd } from './process.js';
import type { TaskUser } from './task-users.js';

/**
 * The messages between the server (spawner.ts) and its spawner process (spawner-child.ts), which
 * spawns and owns the step processes. They travel over the IPC channel with 'advanced'
 * serialization, so output chunks cross as Buffers. Every message names the run it is about.
 */

/** How to start one step process. Options such as a uid and gid to run as belong here. */
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
  /** Output sent back at most, in bytes: the rest is read (the process never blocks on it) and dropped. */
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
   * comes first: a step that ends at once costs no message and no write more.
   */
  | { type: 'spawned'; id: number; pid: number; identity?: string }
  | { type: 'output'; id: number; chunk: Buffer }
  /** The last message of a run: the process has exited and its output is closed (or it never started). */
  | { type: 'end'; id: number; end: ProcessEnd };
