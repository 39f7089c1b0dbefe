import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { type ContainerEngine, DEFAULT_SEARCH_PATH, findEngine, type Logger } from '@pipewright/server';
import type { ServeConfig } from './config.js';
import { StartupError } from './data-dir.js';

type Env = Record<string, string | undefined>;

/**
 * The engine of `container` tasks: the one asked for, which must be on the server's PATH, or by
 * default podman, else docker, if found (else such tasks fail to start, which is logged). It runs
 * with the server's environment, where its operator configures it (CONTAINERS_CONF, DOCKER_HOST).
 */
export function chooseContainerEngine(
  config: ServeConfig,
  env: Env,
  logger: Logger,
): ContainerEngine | undefined {
  if (config.containerEngine === 'off') return undefined;
  const asked = config.containerEngine === 'auto' ? undefined : config.containerEngine;
  const found = findEngine(env.PATH ?? DEFAULT_SEARCH_PATH, asked);
  if (!found) {
    if (asked) throw new StartupError(`--container-engine ${asked}: ${asked} is not on the PATH`);
    logger.info('tasks of the container runtime cannot run: neither podman nor docker is on the PATH');
    return undefined;
  }
  logger.info('tasks of the container runtime run with', { engine: found.name, path: found.path });
  const environment = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return { ...found, environment };
}

/**
 * This server's instance, which labels its containers so that a restart removes those a crash
 * left, and never another server's: its data directory (one server each), the same across
 * restarts.
 */
export function containerInstance(dataDir: string): string {
  return createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 16);
}
