import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** HTTP load on one URL for a bounded time, from this process, over keep-alive connections. */
export async function load(
  url: string,
  options: { headers?: Record<string, string>; seconds: number; connections: number },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    headers: options.headers ?? {},
    duration: options.seconds,
    connections: options.connections,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

/**
 * The same load spread over several servers at once: `connections` in all, dealt round robin
 * (connection i to `urls[i % length]`), each server loaded by its own autocannon run over the
 * same `seconds`. Requests per second and errors are the sums of the runs'; latencies are the
 * worst run's.
 */
export async function loadAcross(
  urls: string[],
  options: { headers?: Record<string, string>; seconds: number; connections: number },
): Promise<LoadResult> {
  const results = await Promise.all(
    urls.map((url, i) =>
      load(url, {
        ...options,
        connections:
          Math.floor(options.connections / urls.length) + (i < options.connections % urls.length ? 1 : 0),
      }),
    ),
  );
  return {
    requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
    p50Ms: Math.max(...results.map((r) => r.p50Ms)),
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  };
}
