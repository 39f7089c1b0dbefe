import type { SecretBox } from '../domain/secrets/secret-box.js';
import type { Logger } from '../logger.js';
import type { PreparedAttempt, Runner, RunOutcome } from '../runner/index.js';
import type { Store } from '../store/index.js';
import { attemptEnd, couldNotRun } from './attempt-outcome.js';
import type { Claim } from './claim.js';
import { createStepRecorder, type StepRecorder } from './step-recorder.js';
import type { AttemptEnd } from './task-completion.js';
import { contextDocument, type ServerAccess, taskEnvironment } from './task-environment.js';
import { maskedValues, readTaskIdentities, writeIdentityFiles } from './task-identities.js';
import { runtimeOf, timeoutOf } from './task-runtime.js';

/** What every attempt runs with. */
export interface AttemptContext {
  store: Store;
  runner: Runner;
  logger: Logger;
  /** Opens the identities tasks name. */
  secrets: SecretBox;
  /** How tasks reach the server, known once it listens. */
  access(): ServerAccess;
  /** Programs the server gives its tasks: a directory first on their PATH. */
  taskBinDir: string | undefined;
  /** Seconds an attempt of a task without a `timeout` of its own may run; none: no limit. */
  defaultTaskTimeoutSeconds: number | undefined;
}

/**
 * Runs one attempt of a claimed task: has the runner prepare its place, opens the identities it
 * names, has the runner run its steps, which `recorder` stores as they go, then hands how the attempt ended to
 * `complete`, which closes the recorder in the transaction that records the end. The attempt's
 * place is released once `complete` returns: the task claimed in its place is on its way.
 */
export async function runAttempt(
  context: AttemptContext,
  { task, apiKey, origin }: Claim,
  signal: AbortSignal,
  complete: (end: AttemptEnd, recorder: StepRecorder) => Promise<void>,
): Promise<void> {
  const { store, runner, logger } = context;
  // The attempt's place is taken before anything is awaited: the loop that claimed the task
  // counted on it (runner.canPrepare), and goes on claiming meanwhile.
  let attempt: PreparedAttempt | undefined;
  let unprepared: unknown;
  try {
    if (origin) attempt = runner.prepareAttempt(JSON.stringify(contextDocument(task, origin.event)));
  } catch (error) {
    unprepared = error;
  }
  // Their values are masked in the output of the steps.
  const named = await readTaskIdentities(store, context.secrets, task, origin?.project);
  const recorder = createStepRecorder(
    store,
    { taskId: task.id, attempt: task.retry, start: task.start_time ?? '' },
    task.spec.data.steps.map((s) => s.label),
    (error) =>
      logger.error('step output could not be stored yet', { task_id: task.id, error: String(error) }),
    maskedValues(named),
  );
  let outcome: RunOutcome;
  try {
    if (!origin) throw new Error(`pipeline ${task.pipeline_id} vanished`);
    if (!attempt) throw unprepared;
    if ('problem' in named) throw new Error(named.problem);
    writeIdentityFiles(named.identities, attempt.tmpDir, attempt.user);
    const runtime = runtimeOf(task);
    const { apiUrl, caFile } = context.access();
    outcome = await runner.run(attempt, {
      taskId: task.id,
      attempt: task.retry,
      steps: task.spec.data.steps,
      runtime,
      environment: taskEnvironment({
        task,
        project: origin.project,
        pipelineEnvironment: origin.environment,
        attempt,
        apiUrl,
        apiKey,
        caFile,
        binDir: context.taskBinDir,
        inContainer: runtime.name === 'container',
        identities: named.identities,
      }),
      caFile,
      signal,
      timeout: timeoutOf(task, context.defaultTaskTimeoutSeconds),
      sink: recorder,
    });
  } catch (error) {
    outcome = couldNotRun(error);
  }
  try {
    await complete(attemptEnd(outcome), recorder);
  } finally {
    if (attempt) runner.releaseAttempt(attempt);
  }
}
