export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Structured logs: one JSON object a line, written through `write`. */
export function createJsonLogger(level: LogLevel, write: (line: string) => void): Logger {
  const at =
    (entryLevel: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (RANK[entryLevel] < RANK[level]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level: entryLevel, message, ...fields })}\n`);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
