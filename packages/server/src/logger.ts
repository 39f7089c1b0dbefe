export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** How long debug and info lines wait, at most, to be written together. */
const BATCH_MS = 50;
/** Buffered characters past which they are written at once. */
const BATCH_CHARS = 64 * 1024;

// Buffers with lines not yet written. The process writes them when it exits, however it
// exits (process.exit after the last "stopped" line, an uncaught exception).
const unwritten = new Set<() => void>();
let flushesOnExit = false;
function writeOnExit(flush: () => void): void {
  unwritten.add(flush);
  if (flushesOnExit) return;
  flushesOnExit = true;
  process.on('exit', () => {
    for (const pending of unwritten) pending();
  });
}

// Lines come many a millisecond under load: the time is formatted once a millisecond.
let formattedAt = Number.NaN;
let formatted = '';
function timeNow(): string {
  const now = Date.now();
  if (now !== formattedAt) {
    formattedAt = now;
    formatted = new Date(now).toISOString();
  }
  return formatted;
}

/**
 * Structured logs: one JSON object a line, written through `write`, which receives one or
 * more whole lines at a time. A line per request written on its own costs a system call
 * each: debug and info lines are gathered for up to BATCH_MS. A warn or error line is
 * written at once, after those before it, and nothing is lost when the process exits.
 * `flush` writes what is gathered now: for a line someone waits for, such as the program's
 * "listening", which would otherwise wait behind the work that follows it.
 */
export function createJsonLogger(
  level: LogLevel,
  write: (lines: string) => void,
): Logger & { flush(): void } {
  let buffered = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    unwritten.delete(flush);
    const lines = buffered;
    buffered = '';
    if (lines !== '') write(lines);
  };
  const at =
    (entryLevel: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (RANK[entryLevel] < RANK[level]) return;
      buffered += `${JSON.stringify({ time: timeNow(), level: entryLevel, message, ...fields })}\n`;
      if (RANK[entryLevel] >= RANK.warn || buffered.length >= BATCH_CHARS) return flush();
      if (timer) return;
      writeOnExit(flush);
      // Unreferenced: pending lines never keep the process alive; exiting writes them.
      timer = setTimeout(flush, BATCH_MS).unref();
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), flush };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
