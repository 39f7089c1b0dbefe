import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  composeServer,
  createJsonLogger,
  createSecretBox,
  type Logger,
  lockServerInstance,
} from '@pipewright/server';
import { backgroundCheckpointing } from './checkpointing.js';
import type { ServeConfig } from './config.js';
import { chooseContainerEngine, containerInstance } from './container-engine.js';
import { instanceName, lockDataDir, prepareWorkRoot, privateDatabaseFile, StartupError } from './data-dir.js';
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
  // PostgreSQL when asked for, else the data directory's SQLite file.
  const database = config.database ?? privateDatabaseFile(config.dataDir);
  const serverLock = await lockDataDir(config.dataDir, (until) =>
    logger.info('waiting for the server stopping on the data directory', { until: until.toISOString() }),
  );
  // On PostgreSQL, the one server of its instance's name too: another server of that name waits
  // (store/postgres.ts); servers of other names serve beside it.
  const instance = instanceName(config.dataDir);
  const databaseLock = config.database
    ? await lockServerInstance(
        config.database,
        instance,
        () => logger.info('waiting for the server of this instance to stop', { instance }),
        (error) => {
          logger.error('another server took the lock of this instance; stopping', { error: error.message });
          process.kill(process.pid, 'SIGTERM');
        },
      )
    : undefined;
  const taskUsers = chooseTaskUsers(config, logger);
  const identityKey = loadIdentityKey(config.dataDir, config.identityKeyFile);
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
  // SQLite's log is checkpointed by a thread of the program's: PostgreSQL checkpoints by itself.
  const checkpointing = config.database ? undefined : backgroundCheckpointing();
  const server = await composeServer({
    database,
    secrets: createSecretBox(identityKey.key),
    logger,
    work: {
      workRoot: workRoot.dir,
      maxRunningTasks: config.maxRunningTasks,
      instance,
      leaseMs: config.leaseMs,
      graceMs: config.abortGraceMs,
      outputLimitBytes: config.stepOutputLimitBytes,
      taskUsers: taskUsers?.range,
      container: {
        engine: chooseContainerEngine(config, process.env, logger),
        instance: containerInstance(config.dataDir),
      },
      defaultTaskTimeoutSeconds: config.taskTimeoutSeconds,
      // Steps call `pipewright` by its name: the server's own, first on their PATH.
      taskBinDir: placeTaskCli(workRoot.dir, taskUsers !== undefined, logger),
    },
    notifier: { ...config.notifications, smtp: config.smtp },
    app: {
      webRoot: webRoot(),
      bodyLimitBytes: config.bodyLimitBytes,
      rateLimit: config.rateLimitPerSecond > 0 && {
        perSecond: config.rateLimitPerSecond,
        burst: 2 * config.rateLimitPerSecond,
      },
    },
    ...(tls ? { tls: readTls(tls) } : {}),
    requestTimeoutMs: config.requestTimeoutMs,
    checkpoints: checkpointing ?? 'auto',
    // Every route's first request finds its validators compiled (bench/README.md, stall).
    compileValidatorsAhead: true,
  });
  if (!(await server.services.identities.adoptKey())) {
    throw new StartupError(
      `the identity key ${identityKey.file} is not the key the identities of ${config.dataDir} were stored with: start with that one (--identity-key-file)`,
    );
  }
  const firstKey = saveFirstKey(config.dataDir, await server.services.provisioning.bootstrap());
  const scheme = tls ? 'https' : 'http';
  if (!tls) logger.warn('serving plain HTTP: only do this behind a TLS-terminating proxy');
  else if (tls.selfSigned) logger.info('using the self-signed certificate', { cert: tls.cert });

  // Once the stores above have brought the schema up to date: the thread opens its own connection.
  checkpointing?.start(database, logger);
  const port = await server.listen(config.port, config.host);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  // Tasks, and the person at this host, reach the server on loopback when it listens everywhere.
  const localHost = ['0.0.0.0', '::', '[::]'].includes(host) ? '127.0.0.1' : host;
  const localUrl = `${scheme}://${localHost}:${port}`;
  // Before the log line that says the server listens: whoever waits for that line has the key too.
  if (firstKey) announceFirstKey(firstKey, localUrl, tls?.selfSigned ? tls.cert : undefined);
  logger.info('listening', { url: `${scheme}://${host}:${port}/v0`, data_dir: config.dataDir });
  server.start({ apiUrl: localUrl, caFile: workRoot.caFile });
  // Expired data goes in short batches, on a thread of its own.
  const purging = startPurging(server.workStore, database, config.retention, logger);

  onStopSignal(logger, async () => {
    serverLock.announceStop(config.stopDeadlineMs + config.abortGraceMs);
    // Side by side, so that the stop lasts no longer than it announced. The purge's looks stop
    // at once (its thread has a connection of its own): the stores can close meanwhile.
    await Promise.all([purging.stop(), server.stop(config.stopDeadlineMs)]);
    await checkpointing?.stop();
    taskUsers?.claim.release();
    await databaseLock?.release();
    serverLock.release();
  });
  // "listening" now, not with the lines after it, and once a signal stops the server cleanly:
  // whoever waits for that line (a service manager, a test) can go on.
  logger.flush();
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
