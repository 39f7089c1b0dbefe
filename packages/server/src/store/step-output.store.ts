import type { ExpressionBuilder } from 'kysely';
import type { Dialect } from './dialect.js';
import type { DB } from './generated/database.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

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
export function createStepOutputStore(d: Dialect, x: Executor) {
  const { q } = d;
  const chunks = q.selectFrom('step_output_chunks');
  /** The length of a chunk's text in bytes of UTF-8 (the database's encoding). */
  const bytes = (eb: ExpressionBuilder<DB, 'step_output_chunks'>) => d.byteLength(eb.ref('text')).as('bytes');
  const order = ['run', 'attempt', 'step_index', 'seq'] as const;
  // Through the primary key (task_id, run, attempt, step_index, seq), from where the reader is.
  const chunksAfter = prepared(
    6,
    (taskId: string, run: number, attempt: number, stepIndex: number, seq: number, limit: number) =>
      chunks
        .select([...order, 'text', bytes])
        .where('task_id', '=', taskId)
        .where((eb) => eb(eb.refTuple(...order), '>', eb.tuple(run, attempt, stepIndex, seq)))
        .orderBy('run')
        .orderBy('attempt')
        .orderBy('step_index')
        .orderBy('seq')
        .limit(limit),
  );
  const lengthsOf = prepared(1, (taskId: string) =>
    chunks
      .select([...order, bytes])
      .where('task_id', '=', taskId)
      .orderBy('run')
      .orderBy('attempt')
      .orderBy('step_index')
      .orderBy('seq'),
  );
  const running = prepared(1, (taskId: string) =>
    q
      .selectFrom('step_executions')
      .select((eb) => eb.lit(1).as('one'))
      .where('task_id', '=', taskId)
      .where('status', '=', 'started')
      .limit(1),
  );
  return {
    /** The chunks after `key`, in order, at most `limit`. */
    after(taskId: string, key: ChunkKey, limit: number): Promise<OutputChunk[]> {
      return x.all(chunksAfter(taskId, key.run, key.attempt, key.step_index, key.seq, limit));
    },
    /**
     * Where byte `offset` of the task's output (every run, attempt and step, in order) lies: in the
     * chunk that follows chunk `after`, which starts at byte `start` (at the end of the output, the
     * chunk to come); undefined when the output is shorter than `offset`.
     */
    async locate(taskId: string, offset: number): Promise<{ after: ChunkKey; start: number } | undefined> {
      // The lengths alone, to find where an offset falls without reading the text before it.
      const lengths = await x.all(lengthsOf(taskId));
      let after = BEFORE_FIRST_CHUNK;
      let start = 0;
      for (const { bytes, ...key } of lengths) {
        if (offset < start + bytes) return { after, start };
        after = key;
        start += bytes;
      }
      return offset === start ? { after, start } : undefined;
    },
    /** Whether a step of the task is still recorded as running (its output may grow). */
    async anyRunning(taskId: string): Promise<boolean> {
      const row = await x.first(running(taskId));
      return row !== undefined;
    },
  };
}
