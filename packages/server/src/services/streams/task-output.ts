import type { Schemas } from '@pipewright/types';
import type { ChunkKey, OutputChunk } from '../../store/index.js';

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
