/**
 * The runner: runs the steps of one task instance as processes and reports through a sink. It knows
 * neither HTTP nor SQL.
 */
export {
  CONTAINER_PATHS,
  type ContainerEngine,
  type ContainerEngineName,
  type ContainerRequest,
  containerCommand,
  containerLabels,
  findEngine,
} from './container.js';
export { removeStaleContainers } from './container-removal.js';
export { DEFAULT_SEARCH_PATH } from './executable.js';
export { runSteps } from './run-steps.js';
export type {
  ContainerContext,
  ContainerRuntime,
  RunOutcome,
  RunRequest,
  RunSink,
  Runtime,
  Step,
  StepResult,
} from './types.js';
