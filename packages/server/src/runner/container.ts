import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { findExecutable } from './executable.js';
import { scriptArgv, scriptName } from './script.js';
import type { TaskUser } from './task-users.js';
import type { ContainerRuntime, Step } from './types.js';

export type ContainerEngineName = 'docker' | 'podman';

/** The engine container steps run with, chosen by the server. */
export interface ContainerEngine {
  name: ContainerEngineName;
  /** The engine's executable. */
  path: string;
  /**
   * The engine's own environment (the server's: DOCKER_HOST, CONTAINERS_CONF...). A step's
   * variables never go through it: they would reach a program that runs as the server's user.
   */
  environment: Record<string, string>;
}

/** The host files of an attempt that its containers see, at CONTAINER_PATHS. */
export interface AttemptFiles {
  workDir: string;
  tmpDir: string;
  contextPath: string;
  /** The server's certificate, when self-signed. */
  caFile?: string | undefined;
}

/** What containerCommand needs of a run, besides the step. */
export interface ContainerRequest {
  runtime: ContainerRuntime;
  files: AttemptFiles;
  /** Where the runner writes the step's script and its variables' file (ENV_FILE_NAME). */
  scriptDir: string;
  /** Names this container: unique on the host (see containerName). */
  name: string;
  /** Labels that find the container again after a crash (see containerLabels). */
  labels: Record<string, string>;
  /** The container's processes run as this user; the image's own user when absent. */
  user?: TaskUser | undefined;
}

/**
 * Where an attempt's files appear inside its containers: the environment of a container step
 * names these paths (scheduler/task-environment.ts), which exist inside, not the host's.
 */
export const CONTAINER_PATHS = {
  workDir: '/pipewright/work',
  tmpDir: '/pipewright/tmp',
  contextPath: '/pipewright/context.json',
  caFile: '/pipewright/ca.pem',
} as const;

/** Where a `code` step's script appears inside the container (read-only), beside the working directory. */
const CONTAINER_SCRIPT_DIR = '/pipewright';

/** The label every container of a server carries, with the server's instance as its value. */
export const INSTANCE_LABEL = 'io.pipewright.instance';

export const NO_ENGINE_MESSAGE =
  'the container runtime needs podman or docker, and the server has neither (--container-engine)';

/**
 * Podman first: it needs no daemon, so that it works once installed, where a docker client is
 * often installed without a daemon to talk to.
 */
const DETECTION_ORDER: readonly ContainerEngineName[] = ['podman', 'docker'];

/** The engine named, or the first of podman and docker found on `searchPath`, with its path. */
export function findEngine(
  searchPath: string,
  name?: ContainerEngineName,
): { name: ContainerEngineName; path: string } | undefined {
  for (const candidate of name ? [name] : DETECTION_ORDER) {
    const lookup = findExecutable(candidate, searchPath, '/');
    if (lookup.found) return { name: candidate, path: lookup.path };
  }
  return undefined;
}

/** The labels of an attempt's containers: the server's instance, the task and the attempt. */
export function containerLabels(instance: string, taskId: string, attempt: number): Record<string, string> {
  return {
    [INSTANCE_LABEL]: instance,
    'io.pipewright.task': taskId,
    'io.pipewright.attempt': String(attempt),
  };
}

/**
 * A name for a step's container: its task, attempt and step, then random characters, as a task
 * restarted from its first attempt runs again under the same numbers.
 */
export function containerName(labels: Record<string, string>, index: number): string {
  const task = labels['io.pipewright.task'] ?? 'task';
  const attempt = labels['io.pipewright.attempt'] ?? '0';
  return `pipewright-${task}-${attempt}-${index + 1}-${randomBytes(4).toString('hex')}`;
}

/** The file of a step's variables in the script directory, read by the engine (--env-file). */
export function envFileName(index: number): string {
  return `step-${index + 1}.env`;
}

/**
 * The longest `NAME=value` line of an env file, in bytes: both engines read the file with Go's
 * bufio.Scanner, which fails on lines of 64 KiB; kept well below it.
 */
const ENV_LINE_LIMIT = 64_000;

/**
 * The env file of a step's variables, or why they cannot go in one. Both engines read one
 * variable a line, values as written: a value with a line break cannot be passed this way.
 */
export function envFile(environment: Record<string, string>): { text: string } | { problem: string } {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(environment)) {
    if (/[\r\n]/.test(value)) {
      return { problem: `the container runtime cannot pass ${name}: its value holds a line break` };
    }
    const line = `${name}=${value}`;
    if (Buffer.byteLength(line) > ENV_LINE_LIMIT) {
      return {
        problem: `the container runtime cannot pass ${name}: its value is over ${ENV_LINE_LIMIT} bytes`,
      };
    }
    lines.push(line);
  }
  return { text: lines.map((line) => `${line}\n`).join('') };
}

/**
 * The arguments of the engine (after its executable) that run one step in a new container, the
 * same for docker and podman:
 *
 * - `--rm`, and a name and labels: the container goes when its step ends; one left by an abort
 *   (its engine client killed) or a crash is removed by name or by label (container-removal.ts).
 *   `--stop-timeout 0`: that removal kills at once (the grace was the abort's), where podman's
 *   `rm -f` would give it 10 more seconds.
 * - `--init`: the engine's init (catatonit, tini) is the container's PID 1, so that the step gets
 *   the SIGTERM of an abort (the engine client forwards the signals it gets), orphans are
 *   reaped, and everything the step started goes when it ends, as for a local step.
 * - Variables from a file (`--env-file`), written by the runner where only the server reads:
 *   never on a command line, which every user of the host can read, nor in the engine's own
 *   environment, which a task could otherwise fill with LD_PRELOAD or DOCKER_HOST.
 * - `--network host`: steps reach the server at 127.0.0.1, as local steps do; `none` without.
 */
export function containerCommand(request: ContainerRequest, step: Step, index: number): string[] {
  const { runtime, files } = request;
  const script = scriptName(index);
  const scriptInside = `${CONTAINER_SCRIPT_DIR}/${script}`;
  const mount = (host: string, inside: string, readOnly = false) => [
    '-v',
    `${host}:${inside}${readOnly ? ':ro' : ''}`,
  ];
  return [
    'run',
    '--rm',
    '-i',
    '--init',
    '--name',
    request.name,
    ...Object.entries(request.labels).flatMap(([name, value]) => ['--label', `${name}=${value}`]),
    '--stop-timeout',
    '0',
    '--pull',
    runtime.pull,
    '--network',
    runtime.network ? 'host' : 'none',
    ...(runtime.memoryMib === undefined ? [] : ['--memory', `${runtime.memoryMib}m`]),
    ...(runtime.cpus === undefined ? [] : ['--cpus', String(runtime.cpus)]),
    ...(request.user ? ['--user', `${request.user.uid}:${request.user.gid}`] : []),
    ...mount(files.workDir, CONTAINER_PATHS.workDir),
    ...mount(files.tmpDir, CONTAINER_PATHS.tmpDir),
    ...mount(files.contextPath, CONTAINER_PATHS.contextPath, true),
    ...(files.caFile ? mount(files.caFile, CONTAINER_PATHS.caFile, true) : []),
    ...(step.code === undefined ? [] : mount(join(request.scriptDir, script), scriptInside, true)),
    '-w',
    CONTAINER_PATHS.workDir,
    '--env-file',
    join(request.scriptDir, envFileName(index)),
    '--',
    runtime.image,
    ...(step.code === undefined
      ? [step.command ?? '', ...(step.arguments ?? [])]
      : scriptArgv(scriptInside, step.code, step.arguments)),
  ];
}

/** The engine's arguments that list the containers of a server's instance, running or not, one id a line. */
export function staleContainersCommand(instance: string): string[] {
  return ['ps', '--all', '--quiet', '--no-trunc', '--filter', `label=${INSTANCE_LABEL}=${instance}`];
}

/** The engine's arguments that kill and remove a container, by name or id. */
export function removeContainerCommand(container: string): string[] {
  return ['rm', '--force', container];
}

/** An image name starting with '-' would be read by the engine as an option. */
export function invalidImageProblem(image: string): string | undefined {
  return image === '' || image.startsWith('-') ? `invalid image name: ${JSON.stringify(image)}` : undefined;
}
