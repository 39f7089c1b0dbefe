import { mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

/** One line of the results: ours against a baseline, and the goal it is held to. */
export interface Row {
  benchmark: string;
  metric: string;
  ours: number;
  baseline?: number;
  baselineName?: string;
  /** ours/baseline or baseline/ours: whichever says "how much worse" (>1 is worse). */
  ratio?: number;
  unit: string;
  goal?: string;
  met?: boolean;
}

export interface Context {
  root: string;
  quick: boolean;
  /** The default cap of running tasks of the server: 2 x CPUs. */
  parallelism: number;
  dir(name: string): string;
  log(message: string): void;
}

export function createContext(quick: boolean): Context {
  const root = mkdtempSync(join(tmpdir(), 'pipewright-bench-'));
  return {
    root,
    quick,
    parallelism: 2 * availableParallelism(),
    dir: (name) => mkdtempSync(join(root, `${name}-`)),
    log: (message) => process.stderr.write(`  ${message}\n`),
  };
}
