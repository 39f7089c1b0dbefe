import { randomFillSync } from 'node:crypto';

/**
 * Random bytes drawn 4 KiB at a time from the CSPRNG: a call into OpenSSL costs more than what
 * an id or a task key does with a few bytes. Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** `size` random bytes (at most 4096), as a view valid until the next call: copy what is kept. */
export function randomView(size: number): Buffer {
  if (offset + size > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const view = pool.subarray(offset, offset + size);
  offset += size;
  return view;
}
