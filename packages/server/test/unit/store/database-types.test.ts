import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The stores' queries are typed by src/store/generated/database.ts, which kysely-codegen makes
// from a database the migrations build: a migration without a new generation would leave the
// queries typed against a schema that no longer is.
describe('the generated types of the tables', () => {
  it('are those of the schema the migrations make', () => {
    const script = fileURLToPath(new URL('../../../scripts/generate-database-types.mjs', import.meta.url));
    expect(() => execFileSync(process.execPath, [script, '--check'], { stdio: 'pipe' })).not.toThrow();
  });
});
