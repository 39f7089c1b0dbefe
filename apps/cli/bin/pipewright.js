#!/usr/bin/env node
import { existsSync } from 'node:fs';

// The program is one bundled file (scripts/bundle.mjs), made by the build.
const program = new URL('../dist/pipewright.mjs', import.meta.url);
if (existsSync(program)) {
  await import(program.href);
} else {
  process.stderr.write(
    'pipewright: the program is not built yet: run `npm run build` at the root of the repository\n',
  );
  process.exitCode = 1;
}
