import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type AppOptions, createApp } from './app.js';
import type { SecretBox } from './domain/secrets/secret-box.js';
import { type Logger, silentLogger } from './logger.js';
import { createRunner, type RunnerOptions } from './runner/index.js';
import { createNotifier, type NotifierOptions } from './scheduler/notifier.js';
import { createScheduler, type SchedulerOptions, type ServerAccess } from './scheduler/scheduler.js';
import { createServices } from './services/index.js';
import { createTicker, type TickerOptions } from './sources/time-ticker.js';
import { type Checkpoints, openStore } from './store/index.js';

export interface ServerOptions {
  /**
   * Where all the server's data is: a SQLite file, or the URL of a PostgreSQL database
   * (`postgres://...`), which several servers may share.
   */
  database: string;
  /** The identity key: the services seal identities with it, tasks and notifications open them. */
  secrets: SecretBox;
  logger?: Logger;
  /**
   * How tasks run: the scheduler's options and its runner's. Their `secrets` are the server's
   * unless given (a test makes a scheduler whose key is not the one that sealed the identities).
   */
  work: Omit<SchedulerOptions, 'secrets'> & Partial<Pick<SchedulerOptions, 'secrets'>> & RunnerOptions;
  /**
   * The ticker of time triggers: its clock and options. `manual` leaves it stopped by `start`,
   * its passes the caller's to run (tests on a clock of their own).
   */
  ticker?: TickerOptions & { clock?: () => Date; manual?: boolean };
  /** The notifier of pipelines' ends; it opens identities with `secrets`. */
  notifier?: Omit<NotifierOptions, 'secrets'>;
  /** The HTTP API's options; its services and logger are the server's. */
  app?: Omit<AppOptions, 'services' | 'logger'>;
  /** The certificate and key of HTTPS; without them the server speaks plain HTTP. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** How long a slow client may hold a connection per request (default: Node's). */
  requestTimeoutMs?: number;
  /**
   * Who checkpoints the database's write-ahead log (see store/db.ts): a thread of the
   * program's, or (default `auto`) the connections themselves.
   */
  checkpoints?: Checkpoints;
  /**
   * Once started, compile the request validators of every operation ahead of its first request,
   * an operation per turn of the event loop (http/validator-warm-up.ts): about a second of CPU
   * in all, which the program spends and test servers, most of which serve few routes, do not.
   */
  compileValidatorsAhead?: boolean;
  /** How often live streams check for commits the store did not tell of (services/index.ts). */
  changeChecksMs?: number;
}

/**
 * The whole server over one database: its stores, runner, scheduler, ticker, services,
 * notifier, HTTP API and listener, wired the same for the program and for tests. Nothing runs
 * until `listen` and `start`.
 */
export async function composeServer(options: ServerOptions) {
  const logger = options.logger ?? silentLogger;
  // The stores of this server share what they learn of other servers' commits.
  const instance = options.work.instance ?? 'local';
  const store = await openStore(options.database, 'full', options.checkpoints, instance);
  // The scheduler's bookkeeping (claims, step records) and the notifier write through a
  // connection that does not sync every commit: what the API acknowledges still does, through `store`.
  const workStore = await openStore(options.database, 'relaxed', options.checkpoints, instance);
  const { secrets } = options;
  const runner = createRunner(options.work);
  const scheduler = createScheduler(workStore, runner, { secrets, ...options.work }, logger);
  const { clock, manual: manualTicks, ...tickerOptions } = options.ticker ?? {};
  // Installs tell the ticker of changed triggers, whether or not it runs.
  const ticker = createTicker(store, scheduler, logger, clock, tickerOptions);
  // An installation's hidden rows go through workStore: the commit that applies it, through
  // store, syncs them too (services/resources.service.ts).
  const services = createServices(store, scheduler, {
    schedules: ticker,
    secrets,
    unsynced: workStore,
    changeChecksMs: options.changeChecksMs,
  });
  const notifier = createNotifier(workStore, { ...options.notifier, secrets }, logger);
  // Other servers on the database (PostgreSQL): their commits may bring work, or abort tasks that
  // run here. Live streams learn of every commit from the store itself.
  const stopWatching = store.onCommitElsewhere(() => scheduler.commitElsewhere());
  let stopping = false;
  const app = createApp({ services, logger, isStopping: () => stopping, ...options.app });
  const http = listener(app, options);

  return {
    store,
    /** The connection of the scheduler's bookkeeping, for the program's purge too. */
    workStore,
    runner,
    scheduler,
    ticker,
    services,
    notifier,
    app,
    /** Listens on `host`:`port` (0: an ephemeral one); resolves to the port, once it listens. */
    async listen(port: number, host: string): Promise<number> {
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject);
        http.listen(port, host, () => {
          http.off('error', reject);
          resolve();
        });
      });
      return (http.address() as AddressInfo).port;
    },
    /** Starts running tasks, which reach the server as `access` says, ticking and notifying. */
    start(access: ServerAccess): void {
      scheduler.start(access);
      // Time triggers tick once tasks can run; their ticks missed while stopped are handled now.
      if (!manualTicks) ticker.start();
      // Notifications of pipelines' ends, those a stop or crash left pending first.
      notifier.start();
      // A turn later, once the first requests got in: the first install would compile them otherwise.
      setImmediate(() => {
        services.resources.prepare().catch((error: unknown) => {
          logger.warn('could not compile the validators of resource specs ahead', { error: String(error) });
        });
        if (!options.compileValidatorsAhead) return;
        app.compileValidatorsAhead().catch((error: unknown) => {
          logger.warn('could not compile the request validators ahead', { error: String(error) });
        });
      });
    },
    /**
     * Answers 503 to new requests (but those of running tasks' keys), lets running steps finish
     * until the deadline, then aborts them (their tasks are retried or fail); then closes the
     * listener and the stores.
     */
    async stop(deadlineMs: number): Promise<void> {
      stopping = true;
      ticker.stop();
      if (scheduler.runningCount > 0) {
        logger.info('waiting for running tasks', {
          running: scheduler.runningCount,
          deadline_ms: deadlineMs,
        });
      }
      // Side by side, so that the stop lasts no longer than the deadline.
      await Promise.all([notifier.stop(), scheduler.stop(deadlineMs)]);
      // Only now: until here new connections and requests got 503, where a closed port would
      // have said nothing.
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
      stopWatching();
      await Promise.all([workStore.close(), store.close()]);
    },
  };
}

export type ComposedServer = Awaited<ReturnType<typeof composeServer>>;

/** The HTTP or HTTPS server of `app`, with the timeouts asked for. */
function listener(app: ReturnType<typeof createApp>, options: ServerOptions): Server {
  // Slow clients hold a connection at most this long: Node's defaults allow 5 minutes per
  // request and 2 for a TLS handshake, and check only every 30 seconds.
  const timeouts = options.requestTimeoutMs
    ? {
        requestTimeout: options.requestTimeoutMs,
        headersTimeout: options.requestTimeoutMs,
        connectionsCheckingInterval: 1000,
      }
    : {};
  if (!options.tls) return createHttpServer(timeouts, app);
  return createHttpsServer(
    {
      ...options.tls,
      minVersion: 'TLSv1.2',
      ...(options.requestTimeoutMs ? { handshakeTimeout: options.requestTimeoutMs } : {}),
      // Node offers only http/1.1 by default: clients asking for HTTP/1.0 (curl --http1.0) failed.
      ALPNProtocols: ['http/1.1', 'http/1.0'],
      ...timeouts,
    },
    app,
  );
}
