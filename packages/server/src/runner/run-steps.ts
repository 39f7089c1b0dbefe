import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  type ContainerEngine,
  containerCommand,
  containerName,
  envFile,
  envFileName,
  invalidImageProblem,
  NO_ENGINE_MESSAGE,
} from './container.js';
import { removeContainer } from './container-removal.js';
import { DEFAULT_SEARCH_PATH, findExecutable, isExecutableFile } from './executable.js';
import { OutputCapture } from './output.js';
import { errorMessage, type ProcessEnd } from './process.js';
import { removeScript, scriptArgv, shebangInterpreter, writeScript } from './script.js';
import type { Spawner } from './spawner.js';
import type { TaskUser } from './task-users.js';
import { passedTimeout, withTimeout } from './timeouts.js';
import type { ContainerRuntime, RunOutcome, RunRequest, Step, StepResult, TaskTimeout } from './types.js';

/**
 * How a step's process starts: its argv, environment and user. A container step's process is the
 * engine's client, run as the server's user with the engine's environment; its container is named.
 */
type Launch =
  | {
      argv: string[];
      environment: Record<string, string>;
      user: TaskUser | undefined;
      container?: { engine: ContainerEngine; name: string };
    }
  | { problem: string };

/**
 * Runs the steps in order; the first that does not succeed ends the run, and later steps are neither
 * started nor reported. A step whose turn comes after the abort is not reported either. A timeout
 * that passes stops the running step as an abort does (the step after it, if it passed between
 * two), and the run times out. The steps' processes run through `spawner`.
 */
export async function runSteps(spawner: Spawner, request: RunRequest): Promise<RunOutcome> {
  const searchPath = request.environment.PATH ?? DEFAULT_SEARCH_PATH;
  const run = withTimeout(request.signal, request.timeout?.seconds, timeoutName(request.timeout));
  try {
    for (const [index, step] of request.steps.entries()) {
      if (request.signal.aborted) return { outcome: 'aborted' };
      const result = await runStep(spawner, request, run.signal, step, index, searchPath);
      if (result.outcome === 'aborted') return { outcome: 'aborted' };
      if (result.outcome !== 'succeeded') {
        const outcome = result.outcome === 'timed_out' ? 'timed_out' : 'failed';
        return { outcome, stepIndex: index, message: failureMessage(step, index, result) };
      }
    }
    return { outcome: 'succeeded' };
  } finally {
    run.clear();
  }
}

/** How failure messages name the run's timeout. */
function timeoutName(timeout: TaskTimeout | undefined): string {
  return timeout?.source === 'server' ? "the server's default task timeout" : "the task's timeout";
}

/** `runSignal` is the request's signal, aborted also when the task's timeout passes. */
async function runStep(
  spawner: Spawner,
  request: RunRequest,
  runSignal: AbortSignal,
  step: Step,
  index: number,
  searchPath: string,
): Promise<StepResult> {
  const { sink } = request;
  sink.stepStarted(index, new Date());
  const output = new OutputCapture(request.outputLimitBytes, (text) => sink.stepOutput(index, text));
  const limited = withTimeout(runSignal, step.timeout, "the step's timeout");
  const { signal } = limited;
  try {
    const launch = await prepareLaunch(request, step, index, searchPath).catch(
      (error: unknown): Launch => ({ problem: errorMessage(error) }),
    );
    let result: StepResult;
    if ('problem' in launch) {
      result = { outcome: 'not_started', outputTruncated: false, message: launch.problem };
    } else if (signal.aborted) {
      // Aborted, or out of time, while the step was being prepared.
      result = timedOut({ outcome: 'aborted', outputTruncated: false }, signal);
    } else {
      const end = await spawner.run({
        argv: launch.argv,
        environment: launch.environment,
        cwd: request.workDir,
        user: launch.user,
        signal,
        graceMs: request.graceMs,
        outputLimitBytes: request.outputLimitBytes,
        onOutput: (chunk) => output.write(chunk),
        onSpawn: (pid, identity) => sink.processStarted?.(index, pid, identity),
      });
      if (launch.container && leftContainer(end)) {
        await removeContainer(spawner, launch.container.engine, launch.container.name).catch(
          (error: unknown) => output.write(Buffer.from(`\npipewright: ${errorMessage(error)}\n`)),
        );
      }
      output.end();
      result = timedOut(stepResult(end, output.truncated), signal);
    }
    sink.stepEnded(index, result, new Date());
    return result;
  } finally {
    limited.clear();
    if (step.code !== undefined) removeScript(request.scriptDir, index);
    if (request.runtime.name === 'container')
      rmSync(join(request.scriptDir, envFileName(index)), { force: true });
  }
}

/** The argv of the step's process, or why there is none (a file write failing included). */
function prepareLaunch(request: RunRequest, step: Step, index: number, searchPath: string): Promise<Launch> {
  return request.runtime.name === 'local'
    ? localLaunch(request, step, index, searchPath)
    : containerLaunch(request, request.runtime, step, index);
}

async function localLaunch(
  request: RunRequest,
  step: Step,
  index: number,
  searchPath: string,
): Promise<Launch> {
  if (step.code !== undefined) {
    const script = writeScript(request.scriptDir, index, step.code, request.user);
    const interpreter = shebangInterpreter(step.code);
    // Checked here because a missing interpreter would only show as the shell's "exec: ...: not found".
    // Like the kernel, a relative interpreter is taken from the working directory.
    if (interpreter !== undefined && !isExecutableFile(resolve(request.workDir, interpreter))) {
      return { problem: `the #! line names no executable interpreter: ${JSON.stringify(interpreter)}` };
    }
    return { argv: scriptArgv(script, step.code, step.arguments), ...processOf(request) };
  }
  const lookup = findExecutable(step.command ?? '', searchPath, request.workDir);
  if (!lookup.found) return { problem: lookup.problem };
  return { argv: [lookup.path, ...(step.arguments ?? [])], ...processOf(request) };
}

/** A local step's process: the task's environment, as the task's user. */
const processOf = (request: RunRequest) => ({ environment: request.environment, user: request.user });

/**
 * A container step: the engine's client, which runs the step in a new container (containerCommand)
 * and is run as the server's user, with the engine's own environment; the step's variables go in a
 * file only the server reads, its script where the task user reads it.
 */
async function containerLaunch(
  request: RunRequest,
  runtime: ContainerRuntime,
  step: Step,
  index: number,
): Promise<Launch> {
  const engine = request.container?.engine;
  if (!request.container || !engine) return { problem: NO_ENGINE_MESSAGE };
  const imageProblem = invalidImageProblem(runtime.image);
  if (imageProblem !== undefined) return { problem: imageProblem };
  const variables = envFile(request.environment);
  if ('problem' in variables) return variables;
  writeFileSync(join(request.scriptDir, envFileName(index)), variables.text, { mode: 0o600, flag: 'w' });
  if (step.code !== undefined) writeScript(request.scriptDir, index, step.code, request.user);
  const { labels, files } = request.container;
  const name = containerName(labels, index);
  const args = containerCommand(
    {
      runtime,
      files: { ...files, workDir: request.workDir },
      scriptDir: request.scriptDir,
      name,
      labels,
      user: request.user,
    },
    step,
    index,
  );
  return {
    argv: [engine.path, ...args],
    environment: engine.environment,
    user: undefined,
    container: { engine, name },
  };
}

/**
 * Whether a container step's container may outlive its engine client: after an abort or a
 * timeout (the client may have ended before the container did, or been killed after the grace),
 * or when the client was killed. A client that exited by itself has seen its container end and
 * removed it (`--rm`).
 */
function leftContainer(end: ProcessEnd): boolean {
  return end.kind === 'lost' || end.kind === 'signaled' || (end.kind === 'exited' && end.aborted);
}

function stepResult(end: ProcessEnd, outputTruncated: boolean): StepResult {
  switch (end.kind) {
    case 'not_started':
      return { outcome: 'not_started', outputTruncated, message: end.message };
    case 'lost':
      return { outcome: 'killed', outputTruncated, message: end.message };
    case 'exited':
      if (end.aborted) return { outcome: 'aborted', exitCode: end.exitCode, outputTruncated };
      if (end.exitCode === 0) return { outcome: 'succeeded', exitCode: 0, outputTruncated };
      return {
        outcome: 'failed',
        exitCode: end.exitCode,
        outputTruncated,
        message: `exited with status ${end.exitCode}`,
      };
    case 'signaled':
      if (end.aborted) return { outcome: 'aborted', signal: end.signal, outputTruncated };
      return {
        outcome: 'killed',
        signal: end.signal,
        outputTruncated,
        message: `was killed by signal ${end.signal}`,
      };
  }
}

/** A step stopped because a timeout passed, rather than by an abort: it timed out, saying which timeout. */
function timedOut(result: StepResult, signal: AbortSignal): StepResult {
  const passed = passedTimeout(signal);
  if (result.outcome !== 'aborted' || !passed) return result;
  return { ...result, outcome: 'timed_out', message: `timed out: ${passed.timeout} passed` };
}

/** 'step 2 "Build" exited with status 3', 'step 1 could not start: command not found: foo'. */
function failureMessage(step: Step, index: number, result: StepResult): string {
  const why = result.outcome === 'not_started' ? `could not start: ${result.message}` : result.message;
  return `${stepName(step, index)} ${why}`;
}

/** How messages name a step: 'step 2 "Build"', or 'step 2' without a label. */
function stepName(step: Step, index: number): string {
  return step.label ? `step ${index + 1} ${JSON.stringify(step.label)}` : `step ${index + 1}`;
}
