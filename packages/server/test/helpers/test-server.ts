import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiClient, createClient } from '@pipewright/client';
import { generate } from 'selfsigned';
import { type AppOptions, createApp } from '../../src/app.js';
import { createSecretBox, SECRET_KEY_BYTES } from '../../src/domain/secret-box.js';
import { silentLogger } from '../../src/logger.js';
import { createRunner, type RunnerOptions } from '../../src/runner/index.js';
import { createNotifier, type Notifier, type NotifierOptions } from '../../src/scheduler/notifier.js';
import { createPurger, type Purger, type PurgerOptions } from '../../src/scheduler/purger.js';
import { createScheduler, type Scheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import { createServices, type Services } from '../../src/services/index.js';
import { createTicker, type Ticker, type TickerOptions } from '../../src/sources/time-ticker.js';
import { openStore, type Store } from '../../src/store/index.js';

export interface TestServer {
  baseUrl: string;
  /** The PEM certificate the server presents. */
  ca: string;
  /** Its SQLite file, for tests that compare the stored data itself. */
  databaseFile: string;
  /** The admin key of the default organization made on first start. */
  adminKey: string;
  services: Services;
  store: Store;
  scheduler: Scheduler;
  /**
   * The ticker of time triggers, when asked for, told of installs: not started, its passes
   * are the test's to run (or to start).
   */
  ticker?: Ticker;
  /** The purger of expired data, when asked for: not started, its passes are the test's to run. */
  purger?: Purger;
  /** The notifier of pipelines' ends, when asked for: started, stopped by `close`. */
  notifier?: Notifier;
  /** A client over HTTPS trusting the test certificate. */
  client(apiKey?: string, projectId?: string): ApiClient;
  /** A fresh organization with a unique name; returns its admin key. */
  newOrganization(): string;
  /** A fresh account in the organization of `organization` with `role`; returns its key. */
  newAccount(organization: string, role: 'admin' | 'user'): string;
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

/**
 * The real server on 127.0.0.1, an ephemeral port and a temp SQLite file, with every
 * response validated against the spec (a mismatch answers 500 and fails the test).
 */
export async function startTestServer(
  options: Partial<Omit<AppOptions, 'services'>> & {
    /** The scheduler's options and its runner's. */
    scheduler?: Partial<SchedulerOptions & RunnerOptions>;
    /** Makes `ticker`, on this clock (default the real one), with these options. */
    ticker?: { clock?: () => Date } & TickerOptions;
    /** Makes `purger`, with these retentions, on this clock. */
    purger?: PurgerOptions & { clock: () => Date };
    /** Makes and starts `notifier`, with these options, opening identities with the server's key. */
    notifier?: Omit<NotifierOptions, 'secrets'>;
    /** The scheduler writes through a connection of its own, as the program's does. */
    schedulerConnection?: 'shared' | 'own';
  } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pipewright-test-'));
  const databaseFile = join(dir, 'pipewright.db');
  const store = openStore(databaseFile);
  const workStore = options.schedulerConnection === 'own' ? openStore(databaseFile, 'relaxed') : store;
  // The server's identity key: the services seal identities with it, the scheduler opens them
  // (unless a test gives the scheduler another key, as a server started with the wrong one).
  const secrets = createSecretBox(randomBytes(SECRET_KEY_BYTES));
  const work = {
    secrets,
    maxRunningTasks: 4,
    graceMs: 2000,
    outputLimitBytes: 1024 * 1024,
    workRoot: join(dir, 'work'),
    ...options.scheduler,
  };
  const scheduler = createScheduler(workStore, createRunner(work), work, silentLogger);
  const ticker =
    options.ticker && createTicker(store, scheduler, silentLogger, options.ticker.clock, options.ticker);
  const services = createServices(store, scheduler, undefined, ticker, secrets);
  const purger = options.purger && createPurger(store, options.purger, options.purger.clock);
  const notifier =
    options.notifier && createNotifier(workStore, { ...options.notifier, secrets }, silentLogger);
  const adminKey = services.provisioning.bootstrap();
  if (!adminKey) throw new Error('a fresh database must bootstrap');
  const {
    scheduler: _schedulerOptions,
    ticker: _tickerOptions,
    purger: _purgerOptions,
    notifier: _notifierOptions,
    schedulerConnection: _schedulerConnection,
    ...appOptions
  } = options;
  const app = createApp({ services, validateResponses: true, rateLimit: false, ...appOptions });
  const { cert, key } = await testCertificate();
  const server = createServer({ cert, key }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `https://127.0.0.1:${port}`;
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, cert);
  scheduler.start({ apiUrl: baseUrl, caFile });
  notifier?.start();
  return {
    baseUrl,
    ca: cert,
    databaseFile,
    adminKey,
    services,
    store,
    scheduler,
    ...(ticker ? { ticker } : {}),
    ...(purger ? { purger } : {}),
    ...(notifier ? { notifier } : {}),
    client: (apiKey = adminKey, projectId) =>
      createClient({ baseUrl, apiKey, ca: cert, ...(projectId ? { projectId } : {}) }),
    newOrganization: () =>
      services.provisioning.createOrganization(uniqueName('org'), `${uniqueName('admin')}@example.test`)
        .apiKey,
    newAccount: (organization, role) =>
      services.provisioning.createAccount(organization, `${uniqueName(role)}@example.test`, role),
    close: async () => {
      ticker?.stop();
      await purger?.stop();
      await notifier?.stop();
      await scheduler.stop(0);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (workStore !== store) workStore.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The query of a page's `previous` or `next` cursor, to send as it is. */
export function cursorQuery(
  cursor: { after?: string; before?: string; size: number; sort: string; order: string } | undefined,
) {
  // A cursor's sort is a plain string in the spec; the list's query narrows it to its sorts.
  return { ...cursor } as Record<string, never>;
}
