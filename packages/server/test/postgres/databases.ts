import { randomBytes } from 'node:crypto';
import { type DatabaseAdmin, databaseAdmin } from '@pipewright/testing/postgres';
import { inject } from 'vitest';

/** The migrated database each test server's database copies (global-setup.ts). */
export const TEMPLATE_DATABASE = 'pipewright_template';

/** Whether this run's servers store their data in PostgreSQL (the `postgres` project of vitest.config.ts). */
export const onPostgres = process.env.PIPEWRIGHT_TEST_DATABASE === 'postgres';

let admin: DatabaseAdmin | undefined;

/** A fresh database of the run's cluster, migrated; `drop` removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  admin ??= databaseAdmin(inject('postgresAdminUrl'));
  const name = `test_${randomBytes(8).toString('hex')}`;
  const url = await admin.createDatabase(name, TEMPLATE_DATABASE);
  return { url, drop: () => admin?.dropDatabase(name) ?? Promise.resolve() };
}
