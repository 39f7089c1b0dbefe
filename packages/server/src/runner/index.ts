/**
 * The runner: runs the steps of one task instance as processes and reports through a sink. It knows
 * neither HTTP nor SQL.
 */
export { type ContainerEngine, type ContainerRequest, containerCommand } from './container.js';
export { DEFAULT_SEARCH_PATH } from './executable.js';
export { runSteps } from './run-steps.js';
export type { RunOutcome, RunRequest, RunSink, Runtime, Step, StepResult } from './types.js';
