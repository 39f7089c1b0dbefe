import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import {
  createApp,
  createJsonLogger,
  createNotifier,
  createRunner,
  createScheduler,
  createSecretBox,
  createServices,
  createTicker,
  type Logger,
  openStore,
  type Scheduler,
} from '@pipewright/server';
import type { ServeConfig } from './config.js';
import { chooseContainerEngine, containerInstance } from './container-engine.js';
import { lockDataDir, prepareWorkRoot, privateDatabaseFile, StartupError } from './data-dir.js';
import { loadIdentityKey } from './identity-key.js';
import { startPurging } from './purging.js';
import { shellWord } from './shell-word.js';
import { placeTaskCli } from './task-cli.js';
import { chooseTaskUsers } from './task-users.js';
import { ensureCertificate, readTls } from './tls.js';
import { webRoot } from './web-root.js';

export async function serve(config: ServeConfig): Promise<void> {
  const logger = createJsonLogger(config.logLevel, (line) => process.stderr.write(line));
  // Past a file size limit (ulimit -f) the kernel sends SIGXFSZ, which kills by default:
  // handled, the write fails instead, like on a full disk, and the API answers 503.
  process.on('SIGXFSZ', () => undefined);
  const databaseFile = privateDatabaseFile(config.dataDir);
  const serverLock = await lockDataDir(config.dataDir, (until) =>
    logger.info('waiting for the server stopping on the data directory', { until: until.toISOString() }),
  );
  const store = openStore(databaseFile);
  // The scheduler's bookkeeping (claims, step records) goes through a connection that does
  // not sync every commit: what the API acknowledges still does, through `store`.
  const workStore = openStore(databaseFile, 'relaxed');
  const taskUsers = chooseTaskUsers(config, logger);
  const identityKey = loadIdentityKey(config.dataDir, config.identityKeyFile);
  // Identities are sealed by the services and opened by the scheduler, with the same key.
  const secrets = createSecretBox(identityKey.key);
  let tls: Awaited<ReturnType<typeof ensureCertificate>> | undefined;
  if (!config.insecureHttp) {
    const given = config.tlsCert && config.tlsKey ? { cert: config.tlsCert, key: config.tlsKey } : undefined;
    tls = await ensureCertificate(config.dataDir, given);
  }
  const workRoot = prepareWorkRoot(
    config.dataDir,
    taskUsers !== undefined,
    tls?.selfSigned ? tls.cert : undefined,
  );
  // Steps call `pipewright` by its name: the server's own, first on their PATH.
  const taskBinDir = placeTaskCli(workRoot.dir, taskUsers !== undefined, logger);
  const runner = createRunner({
    workRoot: workRoot.dir,
    maxRunningTasks: config.maxRunningTasks,
    graceMs: config.abortGraceMs,
    outputLimitBytes: config.stepOutputLimitBytes,
    taskUsers: taskUsers?.range,
    container: {
      engine: chooseContainerEngine(config, process.env, logger),
      instance: containerInstance(config.dataDir),
    },
  });
  const scheduler = createScheduler(
    workStore,
    runner,
    {
      maxRunningTasks: config.maxRunningTasks,
      defaultTaskTimeoutSeconds: config.taskTimeoutSeconds,
      taskBinDir,
      secrets,
    },
    logger,
  );
  // Installs tell the ticker of changed triggers; it starts once tasks can run (below).
  const ticker = createTicker(store, scheduler, logger);
  const services = createServices(store, scheduler, undefined, ticker, secrets);
  if (!services.identities.adoptKey()) {
    throw new StartupError(
      `the identity key ${identityKey.file} is not the key the identities of ${config.dataDir} were stored with: start with that one (--identity-key-file)`,
    );
  }
  const firstKey = saveFirstKey(config.dataDir, services.provisioning.bootstrap());

  let stopping = false;
  const app = createApp({
    services,
    logger,
    isStopping: () => stopping,
    webRoot: webRoot(),
    bodyLimitBytes: config.bodyLimitBytes,
    rateLimit: config.rateLimitPerSecond > 0 && {
      perSecond: config.rateLimitPerSecond,
      burst: 2 * config.rateLimitPerSecond,
    },
  });
  // Slow clients hold a connection at most this long: Node's defaults allow 5 minutes per
  // request and 2 for a TLS handshake, and check only every 30 seconds.
  const timeouts = {
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: 1000,
  };
  let server: Server;
  let scheme: 'http' | 'https';
  if (!tls) {
    server = createHttpServer(timeouts, app);
    scheme = 'http';
    logger.warn('serving plain HTTP: only do this behind a TLS-terminating proxy');
  } else {
    server = createHttpsServer(
      {
        ...readTls(tls),
        minVersion: 'TLSv1.2',
        handshakeTimeout: config.requestTimeoutMs,
        // Node offers only http/1.1 by default: clients asking for HTTP/1.0 (curl --http1.0) failed.
        ALPNProtocols: ['http/1.1', 'http/1.0'],
        ...timeouts,
      },
      app,
    );
    scheme = 'https';
    if (tls.selfSigned) logger.info('using the self-signed certificate', { cert: tls.cert });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  // Tasks, and the person at this host, reach the server on loopback when it listens everywhere.
  const localHost = ['0.0.0.0', '::', '[::]'].includes(host) ? '127.0.0.1' : host;
  const localUrl = `${scheme}://${localHost}:${port}`;
  // Before the log line that says the server listens: whoever waits for that line has the key too.
  if (firstKey) announceFirstKey(firstKey, localUrl, tls?.selfSigned ? tls.cert : undefined);
  logger.info('listening', { url: `${scheme}://${host}:${port}/v0`, data_dir: config.dataDir });
  scheduler.start({ apiUrl: localUrl, caFile: workRoot.caFile });
  // Time triggers tick once tasks can run; their ticks missed while stopped are handled now.
  ticker.start();
  // Expired data goes in short batches, on a thread of its own.
  const purger = startPurging(workStore, databaseFile, config.retention, logger);
  // Notifications of pipelines' ends, those a stop or crash left pending first.
  const notifier = createNotifier(workStore, { ...config.notifications, smtp: config.smtp, secrets }, logger);
  notifier.start();
  // A turn later, once the first requests got in: the first install would compile them otherwise.
  setImmediate(() => services.resources.prepare());

  onStopSignal(logger, async () => {
    stopping = true;
    serverLock.announceStop(config.stopDeadlineMs + config.abortGraceMs);
    ticker.stop();
    // Side by side, so that the stop lasts no longer than it announced.
    await Promise.all([purger.stop(), notifier.stop(), stopWork(scheduler, config.stopDeadlineMs, logger)]);
    // Only now, and before the lock goes: until here new connections and requests got 503
    // (but those of running tasks), where a closed port would have said nothing.
    server.close();
    server.closeAllConnections();
    workStore.close();
    store.close();
    taskUsers?.claim.release();
    serverLock.release();
  });
}

/** Lets running steps finish until the deadline, then aborts them (their tasks are retried or fail). */
async function stopWork(scheduler: Scheduler, deadlineMs: number, logger: Logger): Promise<void> {
  if (scheduler.runningCount > 0) {
    logger.info('waiting for running tasks', { running: scheduler.runningCount, deadline_ms: deadlineMs });
  }
  await scheduler.stop(deadlineMs);
}

interface FirstKey {
  apiKey: string;
  /** Where it is kept. */
  file: string;
}

/** The first start's key, kept in a file only its owner can read; undefined on later starts. */
function saveFirstKey(dataDir: string, apiKey: string | undefined): FirstKey | undefined {
  if (!apiKey) return undefined;
  const file = join(dataDir, 'admin-api-key');
  writeFileSync(file, `${apiKey}\n`, { mode: 0o600, flag: 'wx' });
  return { apiKey, file };
}

/**
 * Tells the person who started the server for the first time where it answers and how to
 * log in, with the key, shown only this once, alone on the last line.
 */
function announceFirstKey({ apiKey, file }: FirstKey, url: string, selfSignedCert: string | undefined): void {
  const ca = selfSignedCert ? ` --ca ${shellWord(selfSignedCert)}` : '';
  process.stdout.write(
    `Pipewright serves ${url}/v0` +
      (selfSignedCert ? `, with a self-signed certificate in ${selfSignedCert}\n` : '\n') +
      `Log in with: pipewright login --api-url ${url}${ca}\n` +
      `Created organization "default" with admin account admin@localhost.\n` +
      `Its API key is shown only this once and saved in ${file}:\n${apiKey}\n`,
  );
}

function onStopSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error('failed to stop cleanly', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
