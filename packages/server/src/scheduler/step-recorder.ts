import { createOutputMask } from '../domain/secrets/output-mask.js';
import { formatTime } from '../domain/time.js';
import type { RunSink, StepResult } from '../runner/index.js';
import type { Store } from '../store/index.js';

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

/** What createStepRecorder makes: a runner sink, and close() for the transaction that ends the attempt. */
export type StepRecorder = RunSink & { close(): void };

/**
 * A runner sink that records the step executions of one attempt of a task, in the task's current
 * run (see StepKey).
 *
 * Writes are few, each a commit: a step's start is written once its process has run a while (or
 * printed), with its process group and who leads it (which crash recovery needs); its output in
 * batches; its end with whatever comes next, in one transaction: the next step's start, or
 * `close()`, which the scheduler calls in the transaction that ends the attempt. A step that ends
 * at once is written whole at its end.
 *
 * Every value of `masked` (the task's identities') is replaced by a mask in the output before it
 * is stored, also when the process writes it in pieces: the tail of a chunk that may start one is
 * held back until the next chunk, or the step's end, tells.
 *
 * `stored` is called after output is stored, so that live streams show it at once.
 */
export function createStepRecorder(
  store: Store,
  claim: { taskId: string; attempt: number; start: string },
  labels: readonly (string | undefined)[],
  onFlushError: (error: unknown) => void,
  masked: readonly string[] = [],
  stored: () => void = () => {},
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

  const recordStart = (process?: { group: number; identity: string | undefined }) => {
    if (!unrecorded) return;
    store.stepExecutions.start(
      key(unrecorded.index),
      labels[unrecorded.index],
      formatTime(unrecorded.time),
      process,
    );
    unrecorded = undefined;
  };
  const append = (index: number, text: string) => {
    if (index !== pendingIndex) {
      // What the last step's output held back is the end of it.
      pending += mask.end();
      flush();
    }
    pendingIndex = index;
    pending += mask.push(text);
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    store.stepExecutions.appendOutput(key(pendingIndex), pending);
    pending = '';
    lastFlush = performance.now();
    stored();
  };
  /** A flush on a timer, where nothing above would catch a failure: kept for the next flush. */
  const flushLater = () => {
    try {
      flush();
    } catch (error) {
      onFlushError(error);
    }
  };
  /** Writes the step that ended: its start if it had none (it never spawned), its last output, its end. */
  const recordEnd = () => {
    if (!ended) return flush();
    const { index, result, time } = ended;
    ended = undefined;
    const end = {
      status: STATUS_OF[result.outcome],
      exit_code: result.exitCode,
      output_truncated: result.outputTruncated,
    };
    store.transaction(() => {
      // Not recorded yet, so it has no output stored either: written whole, then what it printed.
      const whole = unrecorded?.index === index ? unrecorded : undefined;
      if (whole) {
        store.stepExecutions.insertEnded(
          key(index),
          labels[index],
          formatTime(whole.time),
          end,
          formatTime(time),
        );
        unrecorded = undefined;
      } else {
        recordStart();
      }
      if (result.outcome === 'not_started' && result.message) append(index, `${result.message}\n`);
      if (index === pendingIndex) pending += mask.end();
      flush();
      if (!whole) store.stepExecutions.end(key(index), end, formatTime(time));
    });
  };

  return {
    stepStarted(index, time) {
      recordEnd();
      unrecorded = { index, time };
    },
    processStarted(_index, pid, identity) {
      recordStart({ group: pid, identity });
    },
    stepOutput(index, text) {
      recordStart();
      append(index, text);
      if (Buffer.byteLength(pending) >= FLUSH_BYTES) flush();
      else {
        const gapLeft = lastFlush + FLUSH_GAP_MS - performance.now();
        timer ??= setTimeout(flushLater, Math.max(QUIET_FLUSH_MS, gapLeft));
      }
    },
    stepEnded(index, result, time) {
      ended = { index, result, time };
    },
    close: recordEnd,
  };
}
