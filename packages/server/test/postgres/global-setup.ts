import { startPostgresCluster } from '@pipewright/testing/postgres';
import type { TestProject } from 'vitest/node';
import { connectPostgres } from '../../src/store/postgres.js';
import { TEMPLATE_DATABASE } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the throwaway cluster's `postgres` database, from which tests create theirs. */
    postgresAdminUrl: string;
  }
}

/**
 * Starts the throwaway PostgreSQL cluster of the `postgres` project's run, with a database
 * migrated once as the template of every test server's own (a copy costs less than migrating).
 */
export default async function setup(project: TestProject) {
  const cluster = await startPostgresCluster();
  const template = await cluster.createDatabase(TEMPLATE_DATABASE);
  const connection = await connectPostgres(template, 'full');
  await connection.pool.end();
  project.provide('postgresAdminUrl', cluster.url('postgres'));
  return () => cluster.stop();
}
