import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from './errors.js';

/**
 * The example project `pipewright init` writes: real files in the package's example-project/
 * (the docs show the same ones). This module sits at the top of src/, so that built (dist/*.js)
 * or bundled (dist/pipewright.mjs), the folder is one level up.
 */
export const EXAMPLE_PROJECT_DIR = fileURLToPath(new URL('../example-project/', import.meta.url));

export interface ExampleFile {
  /** Relative to the project's directory, with `/`. */
  path: string;
  content: Buffer;
}

/** Every file of the example project, in a stable order. */
export function exampleFiles(): ExampleFile[] {
  if (!existsSync(EXAMPLE_PROJECT_DIR)) {
    throw new CliError(`this installation of pipewright has no example project (${EXAMPLE_PROJECT_DIR})`);
  }
  return readdirSync(EXAMPLE_PROJECT_DIR, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => statSync(join(EXAMPLE_PROJECT_DIR, path)).isFile())
    .sort()
    .map((path) => ({ path, content: readFileSync(join(EXAMPLE_PROJECT_DIR, path)) }));
}
