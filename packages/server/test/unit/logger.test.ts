import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createJsonLogger, type LogLevel } from '../../src/logger.js';

/** A logger at `level` whose writes are kept, each as the list of lines it carried. */
function capture(level: LogLevel = 'debug') {
  const writes: string[][] = [];
  const logger = createJsonLogger(level, (lines) => {
    expect(lines.endsWith('\n')).toBe(true);
    writes.push(
      lines
        .slice(0, -1)
        .split('\n')
        .map((line) => JSON.parse(line).message),
    );
  });
  return { logger, writes };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the JSON logger', () => {
  it('writes one JSON object a line, with the time, the level, the message and the fields', () => {
    vi.setSystemTime(new Date('2026-11-22T10:00:00.000Z'));
    const lines: string[] = [];
    createJsonLogger('info', (chunk) => lines.push(chunk)).error('failed', { request_id: 'r1', status: 500 });
    expect(lines).toEqual([
      '{"time":"2026-11-22T10:00:00.000Z","level":"error","message":"failed","request_id":"r1","status":500}\n',
    ]);
  });

  it('gathers debug and info lines for 50 ms and writes them together', () => {
    const { logger, writes } = capture();
    logger.info('one');
    logger.debug('two');
    vi.advanceTimersByTime(49);
    expect(writes).toEqual([]);
    logger.info('three');
    vi.advanceTimersByTime(1);
    expect(writes).toEqual([['one', 'two', 'three']]);
    logger.info('four');
    vi.advanceTimersByTime(50);
    expect(writes).toEqual([['one', 'two', 'three'], ['four']]);
  });

  it.each(['warn', 'error'] as const)('writes a %s line at once, after the lines before it', (level) => {
    const { logger, writes } = capture();
    logger.info('before');
    logger[level]('now');
    expect(writes).toEqual([['before', 'now']]);
    vi.advanceTimersByTime(1_000);
    expect(writes).toHaveLength(1);
  });

  it('writes the lines gathered when flushed, and nothing more at the 50 ms', () => {
    const { logger, writes } = capture();
    logger.info('listening');
    expect(writes).toEqual([]);
    logger.flush();
    expect(writes).toEqual([['listening']]);
    vi.advanceTimersByTime(50);
    expect(writes).toHaveLength(1);
  });

  it('writes at once once 64 KiB are waiting', () => {
    const { logger, writes } = capture();
    const field = 'x'.repeat(1_000);
    for (let i = 0; i < 70; i += 1) logger.info(`line ${i}`, { field });
    expect(writes).toHaveLength(1);
    expect(writes[0]?.length).toBeGreaterThan(60);
    vi.advanceTimersByTime(50);
    expect(writes.flat()).toEqual(Array.from({ length: 70 }, (_, i) => `line ${i}`));
  });

  it('leaves out the lines below its level', () => {
    const { logger, writes } = capture('warn');
    logger.debug('debug');
    logger.info('info');
    logger.warn('warn');
    vi.advanceTimersByTime(50);
    expect(writes).toEqual([['warn']]);
  });
});
