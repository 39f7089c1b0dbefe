/**
 * Polls `read` until `done` holds for what it returns, at most `timeoutMs`; returns the last
 * value read. Tests wait for pipelines this way, never with fixed sleeps. The bound only ends a
 * broken run: it is generous enough for a machine several times slower than usual, so that
 * tests rarely give their own.
 */
export async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
