import { type UseQueryResult, useQuery } from '@tanstack/react-query';
import type { GraphLayout, GraphShape, LayoutRequest, LayoutResponse } from './graph-shape.js';

interface Waiting {
  resolve(layout: GraphLayout): void;
  reject(error: Error): void;
}

/** The page's one layout worker, started by the first pipeline page shown and then kept. */
let worker: Worker | undefined;
const waiting = new Map<number, Waiting>();
let lastId = 0;

function layoutWorker(): Worker {
  if (worker) return worker;
  // Vite builds the worker as a file of its own under /assets/: the CSP's script-src 'self'
  // allows it, as a same-origin module script.
  const started = new Worker(new URL('./graph-layout.worker.ts', import.meta.url), {
    type: 'module',
    name: 'graph-layout',
  });
  started.onmessage = ({ data }: MessageEvent<LayoutResponse>) => {
    const request = waiting.get(data.id);
    waiting.delete(data.id);
    if ('layout' in data) request?.resolve(data.layout);
    else request?.reject(new Error(`The graph could not be laid out: ${data.error}`));
  };
  started.onerror = (event) => {
    // Its script did not load or failed: what waits fails now, and the next layout starts anew.
    event.preventDefault();
    started.terminate();
    if (worker === started) worker = undefined;
    for (const request of waiting.values())
      request.reject(new Error(`The graph could not be laid out: ${event.message || 'its worker failed'}`));
    waiting.clear();
  };
  worker = started;
  return started;
}

function layOutInWorker(shape: GraphShape): Promise<GraphLayout> {
  const worker = layoutWorker();
  lastId += 1;
  const request: LayoutRequest = { id: lastId, shape };
  return new Promise((resolve, reject) => {
    waiting.set(request.id, { resolve, reject });
    worker.postMessage(request);
  });
}

/**
 * Starts the layout worker ahead of need, so that its script is loaded and compiled while the
 * tasks to lay out are still on their way.
 */
export function prepareGraphLayout(): void {
  layoutWorker();
}

/**
 * The layout of a graph, computed in a worker and kept by its shape: a pipeline whose tasks only
 * change status (all a live update does) is never laid out again.
 */
export function useGraphLayout(shape: GraphShape): UseQueryResult<GraphLayout> {
  return useQuery({
    queryKey: ['graph-layout', shape],
    queryFn: () => layOutInWorker(shape),
    staleTime: Number.POSITIVE_INFINITY,
  });
}
