import { join } from 'node:path';
import { findExecutable } from './executable.js';
import { scriptArgv, scriptName } from './script.js';
import type { Step } from './types.js';

export type ContainerEngine = 'docker' | 'podman';

/** What containerCommand needs of a run. */
export interface ContainerRequest {
  image: string;
  workDir: string;
  scriptDir: string;
  environment: Record<string, string>;
}

/** Where the working directory appears inside the container. */
const CONTAINER_WORK_DIR = '/pipewright/work';
/** Where a `code` step's script appears inside the container (read-only), beside the working directory. */
const CONTAINER_SCRIPT_DIR = '/pipewright';

export const NO_ENGINE_MESSAGE = 'the container runtime needs docker or podman, and neither is installed';

/**
 * PATH is where the engine is found on the host; inside the container the image's own PATH is the
 * one that works, so it is not passed in.
 */
const HOST_ONLY_VARIABLES = new Set(['PATH']);

/** The first of docker and podman found on `searchPath`, with its path. */
export function findEngine(
  searchPath: string,
  cwd: string,
): { engine: ContainerEngine; path: string } | undefined {
  for (const engine of ['docker', 'podman'] as const) {
    const lookup = findExecutable(engine, searchPath, cwd);
    if (lookup.found) return { engine, path: lookup.path };
  }
  return undefined;
}

/**
 * The argv that runs one step in a container (argv[0] is the engine's name). Variables are passed by
 * name only (`-e NAME`): the engine reads their values from its own environment, so that secrets never
 * appear on a command line. `--init` gives the step a PID 1 that forwards signals and reaps zombies.
 * A `code` step's script is mounted alone, read-only, beside the working directory.
 */
export function containerCommand(
  engine: ContainerEngine,
  request: ContainerRequest,
  step: Step,
  index: number,
): string[] {
  const script = scriptName(index);
  const scriptInside = `${CONTAINER_SCRIPT_DIR}/${script}`;
  const variables = Object.keys(request.environment)
    .filter((name) => !HOST_ONLY_VARIABLES.has(name))
    .flatMap((name) => ['-e', name]);
  return [
    engine,
    'run',
    '--rm',
    '-i',
    '--init',
    '-v',
    `${request.workDir}:${CONTAINER_WORK_DIR}`,
    ...(step.code === undefined ? [] : ['-v', `${join(request.scriptDir, script)}:${scriptInside}:ro`]),
    '-w',
    CONTAINER_WORK_DIR,
    ...variables,
    request.image,
    ...(step.code === undefined
      ? [step.command ?? '', ...(step.arguments ?? [])]
      : scriptArgv(scriptInside, step.code, step.arguments)),
  ];
}

/** An image name starting with '-' would be read by the engine as an option. */
export function invalidImageProblem(image: string): string | undefined {
  return image === '' || image.startsWith('-') ? `invalid image name: ${JSON.stringify(image)}` : undefined;
}
