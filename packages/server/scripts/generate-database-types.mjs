// Generates src/store/generated/database.ts, the tables' types the stores' queries are built
// with (Kysely), from the schema the migrations make: kysely-codegen reads a database migrated
// from scratch. Run after a build (the migrations are applied by dist/store/db.js, as the server
// applies them). With --check it writes nothing and fails when the committed file drifts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const check = process.argv.includes('--check');
const target = fileURLToPath(new URL('../src/store/generated/database.ts', import.meta.url));
const { openDatabase } = await import('../dist/store/db.js');

const dir = mkdtempSync(join(tmpdir(), 'pipewright-schema-'));
try {
  const file = join(dir, 'schema.db');
  openDatabase(file).close();
  const out = check ? join(dir, 'database.ts') : target;
  const bin = createRequire(import.meta.url).resolve('kysely-codegen/dist/cli/bin.js');
  execFileSync(process.execPath, [bin, '--dialect', 'sqlite', '--url', file, '--out-file', out], {
    stdio: check ? 'ignore' : 'inherit',
  });
  if (check && readFileSync(out, 'utf8') !== readFileSync(target, 'utf8')) {
    console.error(`${target} is out of date: run \`npm run generate -w @pipewright/server\` and commit it`);
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
