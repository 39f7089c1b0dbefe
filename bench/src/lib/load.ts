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
