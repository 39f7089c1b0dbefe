/**
 * The runner: the place where the steps of tasks run as processes (see Runner), reporting through
 * a sink. It knows neither HTTP nor SQL. Nothing outside this folder imports its other modules.
 */
export {
  CONTAINER_PATHS,
  type ContainerEngine,
  type ContainerEngineName,
  findEngine,
} from './container.js';
export { DEFAULT_SEARCH_PATH } from './executable.js';
export type { RecordedGroupStop } from './process-identity.js';
export {
  type AttemptRun,
  createRunner,
  type PreparedAttempt,
  type Runner,
  type RunnerEvents,
  type RunnerOptions,
} from './runner.js';
export { type TaskUser, taskUsersProblem, type UidRange } from './task-users.js';
export { removeTreeSync } from './tree-removal.js';
export type {
  ContainerRuntime,
  RunOutcome,
  RunSink,
  Runtime,
  Step,
  StepResult,
  TaskTimeout,
} from './types.js';
