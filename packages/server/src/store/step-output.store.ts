import type { Db } from './db.js';

/**
 * Where a chunk of output lies: chunks are ordered by run, attempt, step and number, which is
 * the order of `GET /tasks/id/{id}/steps` and of the task's output as a whole.
 */
export interface ChunkKey {
  run: number;
  attempt: number;
  step_index: number;
  seq: number;
}

/** A chunk of a task's output, with its length in bytes of UTF-8. */
export interface OutputChunk extends ChunkKey {
  text: string;
  bytes: number;
}

/** Before the first chunk of any task. */
export const BEFORE_FIRST_CHUNK: ChunkKey = { run: 0, attempt: 0, step_index: 0, seq: -1 };

/** A task's output read a chunk at a time, from anywhere in it: what its output stream reads. */
export function createStepOutputStore(db: Db) {
  // Through the primary key (task_id, run, attempt, step_index, seq), from where the reader is.
  const after = db.prepare<ChunkKey & { task_id: string; limit: number }, OutputChunk>(
    `SELECT run, attempt, step_index, seq, text, length(CAST(text AS BLOB)) AS bytes FROM step_output_chunks
     WHERE task_id = @task_id AND (run, attempt, step_index, seq) > (@run, @attempt, @step_index, @seq)
     ORDER BY run, attempt, step_index, seq LIMIT @limit`,
  );
  // The lengths alone, to find where an offset falls without reading the text before it.
  const lengths = db.prepare<[string], ChunkKey & { bytes: number }>(
    `SELECT run, attempt, step_index, seq, length(CAST(text AS BLOB)) AS bytes FROM step_output_chunks
     WHERE task_id = ? ORDER BY run, attempt, step_index, seq`,
  );
  const running = db
    .prepare<[string], number>(
      `SELECT 1 FROM step_executions WHERE task_id = ? AND status = 'started' LIMIT 1`,
    )
    .pluck();
  return {
    /** The chunks after `key`, in order, at most `limit`. */
    after(taskId: string, key: ChunkKey, limit: number): OutputChunk[] {
      return after.all({ task_id: taskId, ...key, limit });
    },
    /**
     * Where byte `offset` of the task's output (every run, attempt and step, in order) lies: in the
     * chunk that follows chunk `after`, which starts at byte `start` (at the end of the output, the
     * chunk to come); undefined when the output is shorter than `offset`.
     */
    locate(taskId: string, offset: number): { after: ChunkKey; start: number } | undefined {
      let after = BEFORE_FIRST_CHUNK;
      let start = 0;
      for (const { bytes, ...key } of lengths.iterate(taskId)) {
        if (offset < start + bytes) return { after, start };
        after = key;
        start += bytes;
      }
      return offset === start ? { after, start } : undefined;
    },
    /** Whether a step of the task is still recorded as running (its output may grow). */
    anyRunning(taskId: string): boolean {
      return running.get(taskId) !== undefined;
    },
  };
}
