import { type ApiClient, projectChanges } from '@pipewright/client';
import { type QueryKey, type UseQueryResult, useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';

/** How often a view asks again while what it shows can still change and no stream tells it. */
export const LIVE_POLL_MS = 1000;
/** Changes arriving within this time are applied together: one refetch per list, not one per change. */
const BATCH_MS = 250;

const StreamingContext = createContext(false);

/**
 * Follows the project's stream of changes (`GET /changes`) for as long as the project is shown,
 * and marks stale the queries each change touches: the pipeline, its tasks, the lists. While the
 * stream is up, live queries do not poll; when it cannot be opened or drops, they poll again.
 */
export function ProjectLiveUpdates({
  client,
  projectId,
  children,
}: {
  client: ApiClient;
  projectId: string;
  children: ReactNode;
}) {
  const queries = useQueryClient();
  const [streaming, setStreaming] = useState(false);
  useEffect(() => {
    const controller = new AbortController();
    const stale = new Map<string, QueryKey>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const touch = (...keys: QueryKey[]) => {
      for (const key of keys) stale.set(JSON.stringify(key), key);
      timer ??= setTimeout(() => {
        timer = undefined;
        for (const key of stale.values()) void queries.invalidateQueries({ queryKey: key });
        stale.clear();
      }, BATCH_MS);
    };
    (async () => {
      try {
        const changes = projectChanges(
          client,
          {},
          {
            signal: controller.signal,
            onReconnect: () => setStreaming(false),
          },
        );
        for await (const change of changes) {
          if (change.event === 'start') {
            setStreaming(true);
            // What changed before the stream opened: everything of the project is read again.
            touch(['pipelines', projectId], ['pipeline'], ['task'], ['events', projectId]);
          } else if (change.event === 'pipeline') {
            touch(['pipelines', projectId], ['pipeline', change.data.id]);
          } else if (change.event === 'task') {
            touch(['pipeline', change.data.pipeline_id, 'tasks'], ['task', change.data.id]);
          } else if (change.event === 'event') {
            touch(['events', projectId]);
          }
        }
      } catch {
        // A server without the stream, or one that refuses it: polling takes over.
      } finally {
        setStreaming(false);
      }
    })();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [client, projectId, queries]);
  return <StreamingContext.Provider value={streaming}>{children}</StreamingContext.Provider>;
}

export interface LiveQueryOptions<T> {
  queryKey: QueryKey;
  queryFn: () => Promise<T>;
  /** Whether the data can still change (a pipeline not ended, a step still running). */
  live: (data: T | undefined) => boolean;
  enabled?: boolean;
}

/**
 * The one place live updates come from: every view that follows something changing reads it
 * through this hook. While the project's stream of changes is up it refetches when a change
 * touches it (ProjectLiveUpdates); otherwise it polls while `live` says the data can change.
 */
export function useLiveQuery<T>({
  queryKey,
  queryFn,
  live,
  enabled = true,
}: LiveQueryOptions<T>): UseQueryResult<T> {
  const streaming = useContext(StreamingContext);
  return useQuery({
    queryKey,
    queryFn,
    enabled,
    refetchInterval: (query) => (live(query.state.data) && !streaming ? LIVE_POLL_MS : false),
  });
}
