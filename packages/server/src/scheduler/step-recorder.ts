import { formatTime } from '../domain/time.js';
import type { RunSink, StepResult } from '../runner/types.js';
import type { Store } from '../store/index.js';

// Output is stored while a step runs, so that it can be watched, but in batches: one
// append per chunk the process writes would be one SQLite commit per line.
const FLUSH_BYTES = 16 * 1024;
const FLUSH_INTERVAL_MS = 200;

const STATUS_OF: Record<StepResult['outcome'], 'successful' | 'failed' | 'aborted'> = {
  succeeded: 'successful',
  failed: 'failed',
  killed: 'failed',
  not_started: 'failed',
  aborted: 'aborted',
};

/** A runner sink that records the step executions of one attempt of a task. */
export function createStepRecorder(
  store: Store,
  taskId: string,
  attempt: number,
  labels: readonly (string | undefined)[],
): RunSink & { close(): void } {
  let pending = '';
  let pendingIndex = -1;
  // A step is recorded once its process is spawned, with its process group: one write.
  let unrecorded: { index: number; time: Date } | undefined;
  const recordStart = (processGroup?: number) => {
    if (!unrecorded) return;
    store.stepExecutions.start(
      key(unrecorded.index),
      labels[unrecorded.index],
      formatTime(unrecorded.time),
      processGroup,
    );
    unrecorded = undefined;
  };
  let timer: NodeJS.Timeout | undefined;
  const key = (index: number) => ({ task_id: taskId, attempt, step_index: index });

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    store.stepExecutions.appendOutput(key(pendingIndex), pending);
    pending = '';
  };

  return {
    stepStarted(index, time) {
      unrecorded = { index, time };
    },
    processStarted(_index, pid) {
      recordStart(pid);
    },
    stepOutput(index, text) {
      recordStart();
      if (index !== pendingIndex) flush();
      pendingIndex = index;
      pending += text;
      if (Buffer.byteLength(pending) >= FLUSH_BYTES) flush();
      else timer ??= setTimeout(flush, FLUSH_INTERVAL_MS);
    },
    stepEnded(index, result, time) {
      recordStart();
      if (result.outcome === 'not_started' && result.message) this.stepOutput(index, `${result.message}\n`);
      flush();
      store.stepExecutions.end(
        key(index),
        {
          status: STATUS_OF[result.outcome],
          exit_code: result.exitCode,
          output_truncated: result.outputTruncated,
        },
        formatTime(time),
      );
    },
    close: flush,
  };
}
