import { type ContainerEngine, removeContainerCommand, staleContainersCommand } from './container.js';
import type { Spawner } from './spawner.js';

/** An engine command that takes longer is stopped: a hung engine must not hold a server's stop forever. */
const ENGINE_COMMAND_TIMEOUT_MS = 60_000;
/** Output kept of an engine command: ids, or an error message. */
const ENGINE_OUTPUT_LIMIT_BYTES = 1024 * 1024;

/** Runs the engine with `args` as the server's user; its output, or throws saying how it failed. */
async function runEngine(spawner: Spawner, engine: ContainerEngine, args: string[]): Promise<string> {
  const chunks: Buffer[] = [];
  const end = await spawner.run({
    argv: [engine.path, ...args],
    environment: engine.environment,
    cwd: '/',
    signal: AbortSignal.timeout(ENGINE_COMMAND_TIMEOUT_MS),
    graceMs: 1000,
    outputLimitBytes: ENGINE_OUTPUT_LIMIT_BYTES,
    onOutput: (chunk) => chunks.push(chunk),
  });
  const output = Buffer.concat(chunks).toString('utf8');
  if (end.kind === 'exited' && end.exitCode === 0 && !end.aborted) return output;
  const how = end.kind === 'exited' ? `exited with status ${end.exitCode}` : end.kind;
  throw new Error(`${engine.name} ${args[0]} ${how}: ${output.trim()}`);
}

/**
 * Kills and removes a container (by name or id) and everything running in it; one already gone
 * is no error (podman says nothing of it, docker says "No such container").
 */
export async function removeContainer(
  spawner: Spawner,
  engine: ContainerEngine,
  container: string,
): Promise<void> {
  try {
    await runEngine(spawner, engine, removeContainerCommand(container));
  } catch (error) {
    if (!/no such container/i.test(String(error))) throw error;
  }
}

/**
 * Removes the containers a previous run of this server's instance left (a crash kills their
 * engine clients, not them), found by its label: never another server's. Resolves to how many.
 */
export async function removeStaleContainers(
  spawner: Spawner,
  engine: ContainerEngine,
  instance: string,
): Promise<number> {
  const ids = (await runEngine(spawner, engine, staleContainersCommand(instance)))
    .split(/\s+/)
    .filter(Boolean);
  // One at a time: given several, podman 4.3 removes none when one of them is already gone (one
  // of these may end, and go, meanwhile).
  for (const id of ids) await removeContainer(spawner, engine, id);
  return ids.length;
}
