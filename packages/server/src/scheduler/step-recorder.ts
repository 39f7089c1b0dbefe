import { createOutputMask } from '../domain/secrets/output-mask.js';
import { formatTime } from '../domain/time.js';
import type { RunSink, StepResult } from '../runner/index.js';
import type { Store, Tables } from '../store/index.js';

// Output is stored while a step runs, so that it can be watched live, in batches: one append
// per chunk the process writes would be one SQLite commit per line. A batch is stored
// QUIET_FLUSH_MS after its first output, or FLUSH_GAP_MS after the last batch if that is later
// (so a step commits its output at most 1000 / FLUSH_GAP_MS times a second), or at once at
// FLUSH_BYTES. A line printed alone reaches a viewer within milliseconds.
const FLUSH_BYTES = 16 * 1024;
const FLUSH_GAP_MS = 20;
const QUIET_FLUSH_MS = 2;

const STATUS_OF: Record<StepResult['outcome'], 'successful' | 'failed' | 'aborted'> = {
  succeeded: 'successful',
  failed: 'failed',
  killed: 'failed',
  not_started: 'failed',
  aborted: 'aborted',
  // Stopped as an abort stops a step, but the task fails: so does the step.
  timed_out: 'failed',
};

/**
 * What createStepRecorder makes: a runner sink, `settle()` once the run is over, and `close(tx)`
 * for the transaction that ends the attempt.
 */
export type StepRecorder = RunSink & {
  /** Resolves once every write the run asked for is done; nothing is written on a timer any more. */
  settle(): Promise<void>;
  /** Writes what is left, in the transaction `tx`; after settle(). */
  close(tx: Tables): Promise<void>;
};

/**
 * A runner sink that records the step executions of one attempt of a task, in the task's current
 * run (see StepKey).
 *
 * Writes are few, each a commit: a step's start is written once its process has run a while (or
 * printed), with its process group and who leads it (which crash recovery needs); its output in
 * batches; its end with whatever comes next, in one transaction: the next step's start, or
 * `close(tx)`, which the scheduler calls in the transaction that ends the attempt. A step that ends
 * at once is written whole at its end. The runner tells of its steps as they go, and the writes
 * follow one another in that order, each started as the one before ends (or at once).
 *
 * Every value of `masked` (the task's identities') is replaced by a mask in the output before it
 * is stored, also when the process writes it in pieces: the tail of a chunk that may start one is
 * held back until the next chunk, or the step's end, tells.
 */
export function createStepRecorder(
  store: Store,
  claim: { taskId: string; attempt: number; start: string },
  labels: readonly (string | undefined)[],
  onFlushError: (error: unknown) => void,
  masked: readonly string[] = [],
): StepRecorder {
  const mask = createOutputMask(masked);
  let pending = '';
  let pendingIndex = -1;
  let timer: NodeJS.Timeout | undefined;
  // When output was last stored (performance.now()).
  let lastFlush = -Infinity;
  // A step is recorded once its process is spawned, with its process group: one write.
  let unrecorded: { index: number; time: Date } | undefined;
  let ended: { index: number; result: StepResult; time: Date } | undefined;
  const key = (index: number) => ({
    task_id: claim.taskId,
    attempt: claim.attempt,
    step_index: index,
    attempt_start: claim.start,
  });

  // The writes, one after the other: the runner's calls do not wait for them.
  let writes: Promise<void> = Promise.resolve();
  let writing = 0;
  let settled = false;
  const enqueue = (write: () => Promise<unknown>) => {
    const next = async () => {
      try {
        await write();
      } catch (error) {
        onFlushError(error);
      } finally {
        writing -= 1;
      }
    };
    writes = writing++ === 0 ? next() : writes.then(next);
  };

  /** Output of one step, taken from what is pending to be stored. */
  type Output = { index: number; text: string };
  const takePending = (): Output => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const taken = { index: pendingIndex, text: pending };
    pending = '';
    return taken;
  };
  /** Adds output of step `index`; returns the output of the step before, held back until now, when it changes. */
  const append = (index: number, text: string): Output | undefined => {
    let before: Output | undefined;
    if (index !== pendingIndex) {
      pending += mask.end();
      before = takePending();
    }
    pendingIndex = index;
    pending += mask.push(text);
    return before;
  };
  /** Stores `output`; on a failure, puts it back in front of what is pending if it is still its step's. */
  const storeOutput = async (tables: Tables, { index, text }: Output) => {
    if (text === '') return;
    try {
      await tables.stepExecutions.appendOutput(key(index), text);
    } catch (error) {
      if (index === pendingIndex) pending = text + pending;
      throw error;
    }
    lastFlush = performance.now();
  };
  const flush = (output = takePending()) => {
    if (output.text !== '') enqueue(() => storeOutput(store, output));
  };
  /** The start of the step not recorded yet, if any, to write now. */
  const takeStart = (process?: { group: number; identity: string | undefined }) => {
    const step = unrecorded;
    unrecorded = undefined;
    return async (tables: Tables) => {
      if (step)
        await tables.stepExecutions.start(
          key(step.index),
          labels[step.index],
          formatTime(step.time),
          process,
        );
    };
  };
  /**
   * What is left to write of the step that ended, taken now: its start if it had none (it never
   * spawned), its last output, its end. Returns the writes, for one transaction.
   */
  const takeEnd = (): ((tx: Tables) => Promise<void>) => {
    if (!ended) {
      const output = takePending();
      return (tx) => storeOutput(tx, output);
    }
    const { index, result, time } = ended;
    ended = undefined;
    const end = {
      status: STATUS_OF[result.outcome],
      exit_code: result.exitCode,
      output_truncated: result.outputTruncated,
    };
    // Not recorded yet, so it has no output stored either: written whole, then what it printed.
    const whole = unrecorded?.index === index ? unrecorded : undefined;
    if (whole) unrecorded = undefined;
    const writeStart = takeStart();
    const before =
      result.outcome === 'not_started' && result.message ? append(index, `${result.message}\n`) : undefined;
    if (index === pendingIndex) pending += mask.end();
    const output = takePending();
    return async (tx) => {
      if (whole) {
        await tx.stepExecutions.insertEnded(
          key(index),
          labels[index],
          formatTime(whole.time),
          end,
          formatTime(time),
        );
      } else {
        await writeStart(tx);
      }
      if (before) await storeOutput(tx, before);
      await storeOutput(tx, output);
      if (!whole) await tx.stepExecutions.end(key(index), end, formatTime(time));
    };
  };

  return {
    stepStarted(index, time) {
      if (ended) {
        const writeEnd = takeEnd();
        enqueue(() => store.transaction(writeEnd));
      } else flush();
      unrecorded = { index, time };
    },
    processStarted(_index, pid, identity) {
      if (!unrecorded) return;
      const writeStart = takeStart({ group: pid, identity });
      enqueue(() => writeStart(store));
    },
    stepOutput(index, text) {
      if (unrecorded) {
        const writeStart = takeStart();
        enqueue(() => writeStart(store));
      }
      const before = append(index, text);
      if (before) flush(before);
      if (Buffer.byteLength(pending) >= FLUSH_BYTES) flush();
      else if (!settled) {
        const gapLeft = lastFlush + FLUSH_GAP_MS - performance.now();
        timer ??= setTimeout(flush, Math.max(QUIET_FLUSH_MS, gapLeft));
      }
    },
    stepEnded(index, result, time) {
      ended = { index, result, time };
    },
    settle() {
      settled = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      return writes;
    },
    close(tx) {
      return takeEnd()(tx);
    },
  };
}
