import type { Schemas } from '@pipewright/client';

type Status = Schemas['PipelineStatus'];

/**
 * The filters of the pipelines view as its URL query holds them, so that a filtered view can be
 * shared or bookmarked: `?status=failed&name=deploy&since=2026-11-01&until=2026-11-07`.
 * Dates are days of the reader's time zone, `until` included.
 */
export interface PipelineFilterValues {
  status: Status | '';
  name: string;
  trigger: string;
  command: string;
  since: string;
  until: string;
}

export const FILTER_NAMES = ['status', 'name', 'trigger', 'command', 'since', 'until'] as const;

export function filtersFrom(search: URLSearchParams): PipelineFilterValues {
  const read = (name: string) => search.get(name) ?? '';
  return {
    status: read('status') as Status | '',
    name: read('name'),
    trigger: read('trigger'),
    command: read('command'),
    since: read('since'),
    until: read('until'),
  };
}

/** The start of a local day (`2026-11-22`) as an RFC 3339 time; `days` later for the next ones. */
function startOfDay(day: string, days = 0): string | undefined {
  const date = new Date(`${day}T00:00:00`);
  if (Number.isNaN(date.getTime())) return undefined;
  date.setDate(date.getDate() + days);
  return date.toISOString();
}

/** The query of GET /pipelines for these filters: every filter is the server's. */
export function pipelineQuery(filters: PipelineFilterValues) {
  const since = filters.since ? startOfDay(filters.since) : undefined;
  const before = filters.until ? startOfDay(filters.until, 1) : undefined;
  return {
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.name ? { name: filters.name } : {}),
    ...(filters.trigger ? { trigger_id: filters.trigger } : {}),
    ...(filters.command ? { command_id: filters.command } : {}),
    ...(since ? { creation_time_since: since } : {}),
    ...(before ? { creation_time_before: before } : {}),
  };
}
