import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { createApp, createJsonLogger, createServices, type Logger, openStore } from '@pipewright/server';
import type { ServeConfig } from './config.js';
import { ensureCertificate, readTls } from './tls.js';

/** How long in-flight requests may take to finish once a stop signal arrives. */
const STOP_DEADLINE_MS = 10_000;

export const DATABASE_FILE = 'pipewright.db';

export async function serve(config: ServeConfig): Promise<void> {
  const logger = createJsonLogger(config.logLevel, (line) => process.stderr.write(line));
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const store = openStore(join(config.dataDir, DATABASE_FILE));
  const services = createServices(store);
  announceFirstKey(config.dataDir, services.provisioning.bootstrap());

  const app = createApp({ services, logger });
  let server: Server;
  let scheme: 'http' | 'https';
  if (config.insecureHttp) {
    server = createHttpServer(app);
    scheme = 'http';
    logger.warn('serving plain HTTP: only do this behind a TLS-terminating proxy');
  } else {
    const given = config.tlsCert && config.tlsKey ? { cert: config.tlsCert, key: config.tlsKey } : undefined;
    const tls = await ensureCertificate(config.dataDir, given);
    server = createHttpsServer({ ...readTls(tls), minVersion: 'TLSv1.2' }, app);
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
  logger.info('listening', { url: `${scheme}://${host}:${port}/v0`, data_dir: config.dataDir });
  stopOnSignals(server, logger, () => store.close());
}

/** The first start's key is shown once, and kept in a file only its owner can read. */
function announceFirstKey(dataDir: string, apiKey: string | undefined): void {
  if (!apiKey) return;
  const file = join(dataDir, 'admin-api-key');
  writeFileSync(file, `${apiKey}\n`, { mode: 0o600, flag: 'wx' });
  process.stdout.write(
    `Created organization "default" with admin account admin@localhost.\n` +
      `Its API key is shown only this once and saved in ${file}:\n${apiKey}\n`,
  );
}

function stopOnSignals(server: Server, logger: Logger, release: () => void): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    const deadline = setTimeout(() => server.closeAllConnections(), STOP_DEADLINE_MS);
    deadline.unref();
    server.close(() => {
      release();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
