import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiClient, createClient } from '@pipewright/client';
import { generate } from 'selfsigned';
import { afterAll, beforeAll } from 'vitest';
import type { AppOptions } from '../../src/app.js';
import { createSecretBox, SECRET_KEY_BYTES, type SecretBox } from '../../src/domain/secrets/secret-box.js';
import type { RunnerOptions } from '../../src/runner/index.js';
import type { Notifier, NotifierOptions } from '../../src/scheduler/notifier.js';
import { createPurger, type Purger, type PurgerOptions } from '../../src/scheduler/purger.js';
import type { Scheduler, SchedulerOptions } from '../../src/scheduler/scheduler.js';
import { composeServer } from '../../src/server.js';
import type { Services } from '../../src/services/index.js';
import type { Ticker, TickerOptions } from '../../src/sources/time-ticker.js';
import type { Store } from '../../src/store/index.js';
import { createTestDatabase, onPostgres } from '../postgres/databases.js';

export interface TestServer {
  baseUrl: string;
  /** The PEM certificate the server presents. */
  ca: string;
  /** Its SQLite file, for tests that compare the stored data itself; absent on PostgreSQL. */
  databaseFile?: string;
  /** Its database: the SQLite file, or the PostgreSQL URL. */
  database: string;
  /** The identity key of its services: servers of one database share it. */
  secrets: SecretBox;
  /** The admin key of the default organization made on first start. */
  adminKey: string;
  services: Services;
  /** The connection of the API; the scheduler's bookkeeping has one of its own, as in the program. */
  store: Store;
  scheduler: Scheduler;
  /**
   * The ticker of time triggers, told of installs, on the clock asked for (default the real
   * one): not started, its passes are the test's to run (or to start).
   */
  ticker: Ticker;
  /** The purger of expired data, when asked for: not started, its passes are the test's to run. */
  purger?: Purger;
  /** The notifier of pipelines' ends, with the options asked for: started, stopped by `close`. */
  notifier: Notifier;
  /** A client over HTTPS trusting the test certificate. */
  client(apiKey?: string, projectId?: string): ApiClient;
  /** A fresh organization with a unique name; returns its admin key. */
  newOrganization(): Promise<string>;
  /** A fresh account in the organization of `organization` with `role`; returns its key. */
  newAccount(organization: string, role: 'admin' | 'user'): Promise<string>;
  /**
   * A fresh directory for files that the test and its tasks share (their environment is clean:
   * pass it in), removed by `close`.
   */
  tempDir(): string;
  close(): Promise<void>;
}

let certificate: Promise<{ cert: string; key: string }> | undefined;

/** One self-signed certificate for 127.0.0.1, shared by every server of a test file. */
function testCertificate() {
  certificate ??= generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  }).then((pair) => ({ cert: pair.cert, key: pair.private }));
  return certificate;
}

let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

export type TestServerOptions = Partial<Omit<AppOptions, 'services'>> & {
  /** The scheduler's options and its runner's. */
  scheduler?: Partial<SchedulerOptions & RunnerOptions>;
  /** The ticker's clock (default the real one) and options. */
  ticker?: { clock?: () => Date } & TickerOptions;
  /** Makes `purger`, with these retentions, on this clock. */
  purger?: PurgerOptions & { clock: () => Date };
  /** The notifier's options; it opens identities with the server's key. */
  notifier?: Omit<NotifierOptions, 'secrets'>;
  /**
   * Another server whose database this one serves too (PostgreSQL), with its identity key and
   * admin key; the database stays until that server closes.
   */
  beside?: TestServer;
  /** How often live streams check for commits the store did not tell of (default 100 ms). */
  changeChecksMs?: number;
};

/**
 * The real server on 127.0.0.1, an ephemeral port and a temp SQLite file (or, in the
 * `postgres` project, a database of its own in the run's PostgreSQL cluster), composed as the
 * program composes it, with every response validated against the spec (a mismatch answers
 * 500 and fails the test).
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pipewright-test-'));
  const {
    scheduler: work,
    ticker,
    purger: retention,
    notifier,
    logger,
    beside,
    changeChecksMs,
    ...app
  } = options;
  const databaseFile = onPostgres || beside ? undefined : join(dir, 'pipewright.db');
  const postgres = onPostgres && !beside ? await createTestDatabase() : undefined;
  const database = beside?.database ?? postgres?.url ?? (databaseFile as string);
  // The server's identity key: the services seal identities with it, the scheduler opens them
  // (unless a test gives the scheduler another key, as a server started with the wrong one).
  const secrets = beside?.secrets ?? createSecretBox(randomBytes(SECRET_KEY_BYTES));
  const { cert, key } = await testCertificate();
  const server = await composeServer({
    database,
    secrets,
    logger,
    work: {
      maxRunningTasks: 4,
      graceMs: 2000,
      outputLimitBytes: 1024 * 1024,
      workRoot: join(dir, 'work'),
      ...work,
    },
    ticker: { ...ticker, manual: true },
    notifier,
    app: { validateResponses: true, rateLimit: false, ...app },
    tls: { cert, key },
    ...(changeChecksMs === undefined ? {} : { changeChecksMs }),
  });
  const { services, store } = server;
  const purger = retention && createPurger(store, retention, retention.clock);
  const adminKey = beside?.adminKey ?? (await services.provisioning.bootstrap());
  if (!adminKey) throw new Error('a fresh database must bootstrap');
  const port = await server.listen(0, '127.0.0.1');
  const baseUrl = `https://127.0.0.1:${port}`;
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, cert);
  server.start({ apiUrl: baseUrl, caFile });
  return {
    baseUrl,
    ca: cert,
    ...(databaseFile ? { databaseFile } : {}),
    database,
    secrets,
    adminKey,
    services,
    store,
    scheduler: server.scheduler,
    ticker: server.ticker,
    ...(purger ? { purger } : {}),
    notifier: server.notifier,
    client: (apiKey = adminKey, projectId) =>
      createClient({ baseUrl, apiKey, ca: cert, ...(projectId ? { projectId } : {}) }),
    newOrganization: async () => {
      const { apiKey } = await services.provisioning.createOrganization(
        uniqueName('org'),
        `${uniqueName('admin')}@example.test`,
      );
      return apiKey;
    },
    newAccount: (organization, role) =>
      services.provisioning.createAccount(organization, `${uniqueName(role)}@example.test`, role),
    tempDir: () => mkdtempSync(join(dir, 'shared-')),
    close: async () => {
      await purger?.stop();
      await server.stop(0);
      await postgres?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The test server of the file or `describe` block that calls this: started before its first
 * test, closed after its last (and after its own `afterAll` hooks, which may still use it).
 * What it returns stands for that server in tests and hooks; used elsewhere, it throws.
 */
export function sharedTestServer(options: TestServerOptions = {}): TestServer {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(options);
  });
  afterAll(async () => {
    await started?.close();
    started = undefined;
  });
  return new Proxy({} as TestServer, {
    get(_target, member) {
      if (!started)
        throw new Error('the shared test server runs only during the tests and hooks that share it');
      return started[member as keyof TestServer];
    },
  });
}

/** The query of a page's `previous` or `next` cursor, to send as it is. */
export function cursorQuery(
  cursor: { after?: string; before?: string; size: number; sort: string; order: string } | undefined,
) {
  // A cursor's sort is a plain string in the spec; the list's query narrows it to its sorts.
  return { ...cursor } as Record<string, never>;
}
