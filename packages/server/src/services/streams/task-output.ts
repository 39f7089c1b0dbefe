import type { Schemas } from '@pipewright/types';
import type { ChunkKey, OutputChunk, Store } from '../../store/index.js';

/** Where a task's output stream is: after chunk `key`, which ends at byte `offset` of the output. */
export interface OutputPosition {
  key: ChunkKey;
  offset: number;
}

/**
 * The part of `chunk` from byte `skip` on, moved forward to the start of a character when
 * `skip` falls inside one (a stream can resume from any offset, and must not split a character).
 */
export function chunkFrom(chunk: OutputChunk, skip: number): { text: string; skipped: number } {
  if (skip <= 0) return { text: chunk.text, skipped: 0 };
  const bytes = Buffer.from(chunk.text, 'utf8');
  let start = Math.min(skip, bytes.length);
  // UTF-8 continuation bytes are 10xxxxxx.
  while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start += 1;
  return { text: bytes.subarray(start).toString('utf8'), skipped: start };
}

/** The `output` message data of text that starts at byte `offset` of a task's output. */
export function outputData(
  taskId: string,
  chunk: OutputChunk,
  offset: number,
  text: string,
): Schemas['StepOutputChunk'] {
  return { task_id: taskId, run: chunk.run, attempt: chunk.attempt, index: chunk.step_index, offset, text };
}

/** What of a task its output stream tells again when it changes: its status, run and attempt. */
export const taskState = (task: Schemas['Task']) => `${task.status}:${task.run}:${task.retry}`;

/** What an output stream reads of its task each time it is woken. */
export interface OutputReads {
  task(): Promise<Schemas['Task'] | undefined>;
  /** Whether a step of the task is still running (its output may still grow). */
  anyRunning(): Promise<boolean>;
  /** The chunks after `key`, at most `limit`. */
  after(key: ChunkKey, limit: number): Promise<OutputChunk[]>;
}

/** The reads of task `taskId` of project `projectId`, from the store each time. */
export function storeReads(store: Store, projectId: string, taskId: string): OutputReads {
  return {
    task: () => store.tasks.get(projectId, taskId),
    anyRunning: () => store.stepOutput.anyRunning(taskId),
    after: (key, limit) => store.stepOutput.after(taskId, key, limit),
  };
}

/**
 * `reads`, each made once however often it is asked for with the same arguments: for the streams
 * of one task woken by one batch of changes, which mostly stand at the same place in its output.
 * Each is made when first asked for, so after the batch was committed.
 */
export function sharedReads(reads: OutputReads): OutputReads {
  let task: ReturnType<OutputReads['task']> | undefined;
  let running: Promise<boolean> | undefined;
  const chunks = new Map<string, Promise<OutputChunk[]>>();
  return {
    task: () => (task ??= reads.task()),
    anyRunning: () => (running ??= reads.anyRunning()),
    after: (key, limit) => {
      const asked = `${key.run}:${key.attempt}:${key.step_index}:${key.seq}:${limit}`;
      let read = chunks.get(asked);
      if (!read) {
        read = reads.after(key, limit);
        chunks.set(asked, read);
      }
      return read;
    },
  };
}
