import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type ContainerEngineName,
  isPostgresUrl,
  type LogLevel,
  type NotifierOptions,
  type RetentionOptions,
  type SmtpOptions,
  type UidRange,
} from '@pipewright/server';

export interface ServeConfig {
  host: string;
  port: number;
  dataDir: string;
  /** A PostgreSQL database's URL; without one, the SQLite file of the data directory. */
  database?: string;
  tlsCert?: string;
  tlsKey?: string;
  insecureHttp: boolean;
  logLevel: LogLevel;
  maxRunningTasks: number;
  abortGraceMs: number;
  stopDeadlineMs: number;
  stepOutputLimitBytes: number;
  /** Seconds an attempt of a task without a timeout of its own may run; undefined: no limit. */
  taskTimeoutSeconds: number | undefined;
  /** How long this server's lease on the database lasts unrenewed. */
  leaseMs: number;
  /** Requests per second per API key, with bursts of twice that; 0 turns the limit off. */
  rateLimitPerSecond: number;
  bodyLimitBytes: number;
  /** Time a client has to send a whole request (TLS handshake, headers and body). */
  requestTimeoutMs: number;
  /**
   * The uids tasks run as, one per running task; 'auto': the default range when the host
   * allows it (the server runs as root), else none.
   */
  taskUsers: UidRange | 'off' | 'auto';
  /** Days kept (undefined: forever): see RetentionOptions of @pipewright/server. */
  retention: RetentionOptions;
  /** The file of the key that encrypts identities; undefined: DIR/identity.key, made if missing. */
  identityKeyFile: string | undefined;
  /** What runs the steps of `container` tasks; 'auto': podman, else docker, if found on the PATH. */
  containerEngine: ContainerEngineName | 'off' | 'auto';
  /** The SMTP server of email notifications; undefined: none (they fail, saying so). */
  smtp: SmtpOptions | undefined;
  /** How often notifications are tried, and how long the server waits between attempts. */
  notifications: Required<Pick<NotifierOptions, 'maxAttempts' | 'firstRetryDelayMs'>>;
}

/** The default task users: a range no account or usual subordinate-uid range comes near. */
export const DEFAULT_TASK_USERS: UidRange = { first: 2_000_000_000, last: 2_000_999_999 };

export const USAGE = `Usage:
  pipewright-server [options]                 run the server
  pipewright-server create-organization NAME --admin-email EMAIL [--data-dir DIR | --database URL]
  pipewright-server create-account --organization NAME --email EMAIL --role admin|user [--data-dir DIR | --database URL]
  pipewright-server create-api-key --email EMAIL [--data-dir DIR | --database URL]

Admin commands work while the server runs; each prints the new API key alone on the
last line of its output.

Options (each also read from the environment variable named beside it):
  --listen HOST:PORT    address to serve on (PIPEWRIGHT_LISTEN, default 127.0.0.1:8443)
  --data-dir DIR        database, certificate and first API key (PIPEWRIGHT_DATA_DIR, default ./data)
  --database URL        a PostgreSQL database, postgres://USER@HOST/NAME, which several servers
                        may share (PIPEWRIGHT_DATABASE); default: SQLite, in the data directory
  --tls-cert FILE       PEM certificate (PIPEWRIGHT_TLS_CERT); without one, a self-signed
                        certificate for localhost and 127.0.0.1 is made in DIR/tls/
  --tls-key FILE        PEM private key of --tls-cert (PIPEWRIGHT_TLS_KEY)
  --insecure-http       serve plain HTTP, for a server behind a TLS-terminating proxy
                        (PIPEWRIGHT_INSECURE_HTTP=1); never the default
  --log-level LEVEL     debug, info, warn or error (PIPEWRIGHT_LOG_LEVEL, default info)
  --max-running-tasks N tasks running at once (PIPEWRIGHT_MAX_RUNNING_TASKS, default 2 x CPUs)
  --abort-grace SECONDS after SIGTERM, how long an aborted step has before SIGKILL
                        (PIPEWRIGHT_ABORT_GRACE, default 5)
  --stop-deadline SECONDS
                        on SIGTERM, how long running steps may finish before they are
                        stopped (PIPEWRIGHT_STOP_DEADLINE, default 30)
  --step-output-limit BYTES
                        output kept per step (PIPEWRIGHT_STEP_OUTPUT_LIMIT, default 1048576)
  --task-timeout SECONDS|off
                        how long an attempt of a task without a timeout of its own may
                        run (1 to 604800) before its step is stopped, as --abort-grace
                        says, and the attempt fails (PIPEWRIGHT_TASK_TIMEOUT, default
                        21600: 6 hours)
  --lease SECONDS       on a database several servers share, how long a server that stopped
                        answering keeps its tasks before another ends them (retrying those
                        with retries left); they are ended within 1.2 times it
                        (PIPEWRIGHT_LEASE, default 15)
  --rate-limit N        requests per second per API key, bursts of 2N; 0 turns it off
                        (PIPEWRIGHT_RATE_LIMIT, default 100)
  --body-limit BYTES    largest request body (PIPEWRIGHT_BODY_LIMIT, default 1048576)
  --request-timeout SECONDS
                        time a client has to send a whole request, its TLS handshake
                        and headers included, before it is cut off
                        (PIPEWRIGHT_REQUEST_TIMEOUT, default 30)
  --task-users FIRST-LAST|off
                        uids that running tasks get, one each, so that a task can read
                        neither the data directory nor another task's processes
                        (PIPEWRIGHT_TASK_USERS; default 2000000000-2000999999 when the
                        server runs as root, else off: tasks then run as the server's user)
  --pipeline-retention DAYS|off
                        days finished pipelines without a retention of their own are
                        kept, counted from their end (PIPEWRIGHT_PIPELINE_RETENTION,
                        default off: kept until deleted with their project)
  --step-output-retention DAYS|off
                        days the step output of those pipelines is kept; their steps
                        stay, with an empty output (PIPEWRIGHT_STEP_OUTPUT_RETENTION,
                        default 90)
  --event-retention DAYS|off
                        days events and their command executions are kept, and longer
                        while a pipeline they started is (PIPEWRIGHT_EVENT_RETENTION,
                        default 90)
  --container-engine podman|docker|off
                        what runs the steps of tasks of the container runtime, found
                        on the server's PATH, with the server's environment
                        (PIPEWRIGHT_CONTAINER_ENGINE; default podman, else docker,
                        whichever is found first)
  --identity-key-file FILE
                        the key that encrypts the identities of projects in the
                        database: 32 random bytes in base64 or hex, in a file only
                        the server's user may read (PIPEWRIGHT_IDENTITY_KEY_FILE;
                        default DIR/identity.key, made at the first start). Keep a
                        copy: without it, identities cannot be read. A key other
                        than the one the identities were stored with refuses to start
  --smtp-host HOST      the SMTP server that sends the email notifications of pipelines
                        (PIPEWRIGHT_SMTP_HOST; without one, they fail, saying so)
  --smtp-port PORT      its port (PIPEWRIGHT_SMTP_PORT, default 465 with --smtp-tls tls,
                        else 587)
  --smtp-tls starttls|tls|off
                        starttls: the connection must be upgraded to TLS; tls: TLS from
                        the start; off: no TLS, for a relay on the host only
                        (PIPEWRIGHT_SMTP_TLS, default starttls)
  --smtp-user USER      the user to log in as, if the server wants one (PIPEWRIGHT_SMTP_USER)
  --smtp-password-file FILE
                        a file holding its password (PIPEWRIGHT_SMTP_PASSWORD_FILE), or
                        the password itself in PIPEWRIGHT_SMTP_PASSWORD; never an option,
                        which every user of the host could read
  --smtp-from ADDRESS   the sender of the emails (PIPEWRIGHT_SMTP_FROM; needed with
                        --smtp-host)
  --notification-attempts N
                        attempts of a notification at most, 1 to 20
                        (PIPEWRIGHT_NOTIFICATION_ATTEMPTS, default 6)
  --notification-retry-delay SECONDS
                        the wait after a notification's first failed attempt, doubled
                        after each next one, 1 to 3600 (PIPEWRIGHT_NOTIFICATION_RETRY_DELAY,
                        default 30)
  -h, --help            show this help
`;

export class UsageError extends Error {}

const LOG_LEVELS = new Set(['debug', 'info', 'warn', 'error']);

export interface ParsedCommand {
  command: 'serve' | 'create-organization' | 'create-account' | 'create-api-key' | 'help';
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

export function parseCommand(argv: string[]): ParsedCommand {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const [first, ...positionals] = parsed.positionals;
  if (parsed.values.help) return { command: 'help', positionals: [], values: parsed.values };
  const commands = ['create-organization', 'create-account', 'create-api-key'] as const;
  if (first === undefined) return { command: 'serve', positionals: [], values: parsed.values };
  const command = commands.find((c) => c === first);
  if (!command) throw new UsageError(`unknown command ${first}`);
  return { command, positionals, values: parsed.values };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      listen: { type: 'string' },
      'data-dir': { type: 'string' },
      database: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'insecure-http': { type: 'boolean' },
      'log-level': { type: 'string' },
      'max-running-tasks': { type: 'string' },
      'abort-grace': { type: 'string' },
      'stop-deadline': { type: 'string' },
      'step-output-limit': { type: 'string' },
      'task-timeout': { type: 'string' },
      lease: { type: 'string' },
      'rate-limit': { type: 'string' },
      'body-limit': { type: 'string' },
      'request-timeout': { type: 'string' },
      'task-users': { type: 'string' },
      'pipeline-retention': { type: 'string' },
      'step-output-retention': { type: 'string' },
      'event-retention': { type: 'string' },
      'identity-key-file': { type: 'string' },
      'container-engine': { type: 'string' },
      'smtp-host': { type: 'string' },
      'smtp-port': { type: 'string' },
      'smtp-tls': { type: 'string' },
      'smtp-user': { type: 'string' },
      'smtp-password-file': { type: 'string' },
      'smtp-from': { type: 'string' },
      'notification-attempts': { type: 'string' },
      'notification-retry-delay': { type: 'string' },
      'admin-email': { type: 'string' },
      organization: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

type Env = Record<string, string | undefined>;

export function dataDirOf(values: ParsedCommand['values'], env: Env): string {
  return resolve((values['data-dir'] as string | undefined) ?? env.PIPEWRIGHT_DATA_DIR ?? './data');
}

/** The PostgreSQL database asked for, if any (else the data directory's SQLite file is the database). */
export function databaseOf(values: ParsedCommand['values'], env: Env): string | undefined {
  const url = (values.database as string | undefined) ?? env.PIPEWRIGHT_DATABASE;
  if (url === undefined || url === '') return undefined;
  if (!isPostgresUrl(url)) throw new UsageError('--database wants a URL postgres://USER@HOST/NAME');
  return url;
}

function withDatabase(database: string | undefined): { database?: string } {
  return database === undefined ? {} : { database };
}

/** A whole number from a flag or its variable, with a default. */
function count(
  values: ParsedCommand['values'],
  env: Env,
  flag: string,
  variable: string,
  fallback: number,
): number {
  const raw = (values[flag] as string | undefined) ?? env[variable];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${flag} wants a whole number, not ${raw}`);
  return Number(raw);
}

export function serveConfig(values: ParsedCommand['values'], env: Env): ServeConfig {
  const listen = (values.listen as string | undefined) ?? env.PIPEWRIGHT_LISTEN ?? '127.0.0.1:8443';
  const match = /^(.*):(\d{1,5})$/.exec(listen);
  const port = Number(match?.[2]);
  if (!match?.[1] || port > 65535) throw new UsageError(`--listen wants HOST:PORT, not ${listen}`);
  const logLevel = (values['log-level'] as string | undefined) ?? env.PIPEWRIGHT_LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.has(logLevel)) throw new UsageError(`--log-level must be debug, info, warn or error`);
  const tlsCert = (values['tls-cert'] as string | undefined) ?? env.PIPEWRIGHT_TLS_CERT;
  const tlsKey = (values['tls-key'] as string | undefined) ?? env.PIPEWRIGHT_TLS_KEY;
  if (Boolean(tlsCert) !== Boolean(tlsKey)) throw new UsageError('--tls-cert and --tls-key go together');
  return {
    host: match[1].replace(/^\[(.*)\]$/, '$1'),
    port,
    dataDir: dataDirOf(values, env),
    ...withDatabase(databaseOf(values, env)),
    ...(tlsCert && tlsKey ? { tlsCert: resolve(tlsCert), tlsKey: resolve(tlsKey) } : {}),
    insecureHttp: values['insecure-http'] === true || env.PIPEWRIGHT_INSECURE_HTTP === '1',
    logLevel: logLevel as LogLevel,
    maxRunningTasks: Math.max(
      1,
      count(values, env, 'max-running-tasks', 'PIPEWRIGHT_MAX_RUNNING_TASKS', 2 * availableParallelism()),
    ),
    abortGraceMs: 1000 * count(values, env, 'abort-grace', 'PIPEWRIGHT_ABORT_GRACE', 5),
    stopDeadlineMs: 1000 * count(values, env, 'stop-deadline', 'PIPEWRIGHT_STOP_DEADLINE', 30),
    stepOutputLimitBytes: count(
      values,
      env,
      'step-output-limit',
      'PIPEWRIGHT_STEP_OUTPUT_LIMIT',
      1024 * 1024,
    ),
    taskTimeoutSeconds: taskTimeoutOf(
      (values['task-timeout'] as string | undefined) ?? env.PIPEWRIGHT_TASK_TIMEOUT,
    ),
    leaseMs: 1000 * Math.max(1, count(values, env, 'lease', 'PIPEWRIGHT_LEASE', 15)),
    rateLimitPerSecond: count(values, env, 'rate-limit', 'PIPEWRIGHT_RATE_LIMIT', 100),
    bodyLimitBytes: count(values, env, 'body-limit', 'PIPEWRIGHT_BODY_LIMIT', 1024 * 1024),
    requestTimeoutMs:
      1000 * Math.max(1, count(values, env, 'request-timeout', 'PIPEWRIGHT_REQUEST_TIMEOUT', 30)),
    taskUsers: taskUsersOf((values['task-users'] as string | undefined) ?? env.PIPEWRIGHT_TASK_USERS),
    retention: {
      pipelineDays: days(values, env, 'pipeline-retention', 'PIPEWRIGHT_PIPELINE_RETENTION', undefined),
      stepOutputDays: days(values, env, 'step-output-retention', 'PIPEWRIGHT_STEP_OUTPUT_RETENTION', 90),
      eventDays: days(values, env, 'event-retention', 'PIPEWRIGHT_EVENT_RETENTION', 90),
    },
    identityKeyFile: identityKeyFileOf(
      (values['identity-key-file'] as string | undefined) ?? env.PIPEWRIGHT_IDENTITY_KEY_FILE,
    ),
    containerEngine: containerEngineOf(
      (values['container-engine'] as string | undefined) ?? env.PIPEWRIGHT_CONTAINER_ENGINE,
    ),
    smtp: smtpOf(values, env),
    notifications: {
      maxAttempts: bounded(values, env, 'notification-attempts', 'PIPEWRIGHT_NOTIFICATION_ATTEMPTS', 6, 20),
      firstRetryDelayMs:
        1000 *
        bounded(values, env, 'notification-retry-delay', 'PIPEWRIGHT_NOTIFICATION_RETRY_DELAY', 30, 3600),
    },
  };
}

/** A whole number from 1 to `max` from a flag or its variable, with a default. */
function bounded(
  values: ParsedCommand['values'],
  env: Env,
  flag: string,
  variable: string,
  fallback: number,
  max: number,
): number {
  const value = count(values, env, flag, variable, fallback);
  if (value < 1 || value > max) throw new UsageError(`--${flag} wants 1 to ${max}, not ${value}`);
  return value;
}

/** The SMTP server of email notifications, when --smtp-host names one. */
function smtpOf(values: ParsedCommand['values'], env: Env): SmtpOptions | undefined {
  const option = (flag: string, variable: string) => (values[flag] as string | undefined) ?? env[variable];
  const host = option('smtp-host', 'PIPEWRIGHT_SMTP_HOST');
  if (host === undefined || host === '') return undefined;
  const tls = option('smtp-tls', 'PIPEWRIGHT_SMTP_TLS') ?? 'starttls';
  if (tls !== 'starttls' && tls !== 'tls' && tls !== 'off') {
    throw new UsageError(`--smtp-tls wants starttls, tls or off, not ${tls}`);
  }
  const port = count(values, env, 'smtp-port', 'PIPEWRIGHT_SMTP_PORT', tls === 'tls' ? 465 : 587);
  if (port < 1 || port > 65535) throw new UsageError(`--smtp-port wants 1 to 65535, not ${port}`);
  const from = option('smtp-from', 'PIPEWRIGHT_SMTP_FROM');
  if (!from) throw new UsageError('--smtp-host wants --smtp-from, the sender of the emails');
  const passwordFile = option('smtp-password-file', 'PIPEWRIGHT_SMTP_PASSWORD_FILE');
  let password = env.PIPEWRIGHT_SMTP_PASSWORD;
  if (passwordFile !== undefined) {
    try {
      password = readFileSync(passwordFile, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new UsageError(`--smtp-password-file: cannot read ${passwordFile}: ${(error as Error).message}`);
    }
  }
  return { host, port, tls, user: option('smtp-user', 'PIPEWRIGHT_SMTP_USER'), password, from };
}

/** A number of days, at least 1, or `off` (undefined: kept forever), from a flag or its variable. */
function days(
  values: ParsedCommand['values'],
  env: Env,
  flag: string,
  variable: string,
  fallback: number | undefined,
): number | undefined {
  const raw = (values[flag] as string | undefined) ?? env[variable];
  if (raw === undefined) return fallback;
  if (raw === 'off') return undefined;
  // At most 100 years, the bound of a pipeline's own retention.
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 36500) {
    throw new UsageError(`--${flag} wants a number of days (1 to 36500) or off, not ${raw}`);
  }
  return Number(raw);
}

/** Seconds (1 to 604800, the bound of a task's own timeout), or `off`; 6 hours by default. */
function taskTimeoutOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return 6 * 3600;
  if (raw === 'off') return undefined;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1 || Number(raw) > 604800) {
    throw new UsageError(`--task-timeout wants a number of seconds (1 to 604800) or off, not ${raw}`);
  }
  return Number(raw);
}

function identityKeyFileOf(raw: string | undefined): string | undefined {
  if (raw === '') throw new UsageError('--identity-key-file wants a file');
  return raw === undefined ? undefined : resolve(raw);
}

function taskUsersOf(raw: string | undefined): ServeConfig['taskUsers'] {
  if (raw === undefined) return 'auto';
  if (raw === 'off') return 'off';
  const match = /^(\d{1,10})-(\d{1,10})$/.exec(raw);
  const [first, last] = [Number(match?.[1]), Number(match?.[2])];
  // 0 is root, and 2^32 - 1 means "no change" to setuid.
  if (!match || first < 1 || last < first || last > 2 ** 32 - 2) {
    throw new UsageError(`--task-users wants FIRST-LAST (1 to 4294967294) or off, not ${raw}`);
  }
  return { first, last };
}

function containerEngineOf(raw: string | undefined): ServeConfig['containerEngine'] {
  if (raw === undefined) return 'auto';
  if (raw === 'podman' || raw === 'docker' || raw === 'off') return raw;
  throw new UsageError(`--container-engine wants podman, docker or off, not ${raw}`);
}
