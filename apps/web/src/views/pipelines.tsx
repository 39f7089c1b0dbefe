import type { Schemas } from '@pipewright/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'wouter';
import { firstElements } from '../api/data.js';
import { useLiveQuery } from '../api/live.js';
import { filtersFrom, type PipelineFilterValues, pipelineQuery } from '../api/pipeline-filters.js';
import { useProject } from '../api/project.js';
import { ConfirmButton } from '../ui/confirm.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { PipelineTable } from '../ui/pipeline-table.js';
import { isActive, STATUSES } from '../ui/status.js';

type Status = Schemas['PipelineStatus'];
const STEP = 100;

/** The resources of one type of the project (the Resources view reads the same query). */
function useResources(type: 'trigger' | 'command' | 'pipeline') {
  const { project, client } = useProject();
  return useQuery({
    queryKey: ['resources', project.id, type],
    queryFn: () => firstElements(client, '/resources', { type, size: 100 }, 1000),
  });
}

/**
 * Pipelines, newest first, filtered by the server (status, name, trigger, command, days of
 * creation). The filters live in the URL query: a filtered view can be shared.
 */
export function PipelinesPage() {
  const { project, client } = useProject();
  const queries = useQueryClient();
  const [search, setSearch] = useSearchParams();
  const filters = filtersFrom(search);
  const [limit, setLimit] = useState(STEP);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const pipelineNames = useResources('pipeline');
  const triggers = useResources('trigger');
  const commands = useResources('command');
  const query = pipelineQuery(filters);
  const list = useLiveQuery({
    queryKey: ['pipelines', project.id, 'list', query, limit],
    queryFn: () =>
      firstElements(
        client,
        '/pipelines',
        { sort: 'creation_time', order: 'desc', size: 100, ...query },
        limit,
      ),
    live: (pipelines) => pipelines?.some((p) => isActive(p.status)) ?? false,
  });
  const setFilter = (name: keyof PipelineFilterValues, value: string) => {
    setLimit(STEP);
    setSearch(
      (current) => {
        const next = new URLSearchParams(current);
        if (value) next.set(name, value);
        else next.delete(name);
        return next;
      },
      { replace: true },
    );
  };
  const shown = list.data ?? [];
  const failedSelected = shown.filter((p) => p.status === 'failed' && selected.has(p.id));
  const restartFailed = async () => {
    for (const pipeline of failedSelected) {
      await client.POST('/pipelines/id/{id}/restart_from_failure', { params: { path: { id: pipeline.id } } });
    }
    setSelected(new Set());
    await queries.invalidateQueries({ queryKey: ['pipelines', project.id] });
  };
  const filtered = Object.keys(query).length > 0;
  return (
    <>
      <PageTitle title={`Pipelines · ${project.name}`}>Pipelines</PageTitle>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select
            value={filters.status}
            onChange={(event) => setFilter('status', event.target.value as Status | '')}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Pipeline name
          <input
            type="search"
            list="pipeline-names"
            value={filters.name}
            onChange={(event) => setFilter('name', event.target.value.trim())}
          />
          <datalist id="pipeline-names">
            {pipelineNames.data?.map((resource) => (
              <option key={resource.id} value={resource.spec.name} />
            ))}
          </datalist>
        </label>
        <label>
          Trigger
          <select value={filters.trigger} onChange={(event) => setFilter('trigger', event.target.value)}>
            <option value="">any</option>
            {triggers.data?.map((resource) => (
              <option key={resource.id} value={resource.id}>
                {resource.spec.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Command
          <select value={filters.command} onChange={(event) => setFilter('command', event.target.value)}>
            <option value="">any</option>
            {commands.data?.map((resource) => (
              <option key={resource.id} value={resource.id}>
                {resource.spec.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Created from
          <input
            type="date"
            value={filters.since}
            onChange={(event) => setFilter('since', event.target.value)}
          />
        </label>
        <label>
          Created until
          <input
            type="date"
            value={filters.until}
            onChange={(event) => setFilter('until', event.target.value)}
          />
        </label>
      </form>
      <div className="actions">
        <ConfirmButton
          question={`Restart the failed tasks of ${failedSelected.length} failed pipeline(s)?`}
          confirmLabel="Restart from failure"
          disabled={failedSelected.length === 0}
          onConfirm={restartFailed}
        >
          Restart {failedSelected.length} selected failed
        </ConfirmButton>
      </div>
      {list.error && <ErrorNotice error={list.error} />}
      {!list.data && !list.error && <Loading what="pipelines" />}
      {list.data && (
        <>
          <PipelineTable
            caption={`The ${shown.length} newest pipelines${filtered ? ' matching the filters' : ''}`}
            pipelines={shown}
            selected={selected}
            onSelect={(id, on) =>
              setSelected((current) => {
                const next = new Set(current);
                if (on) next.add(id);
                else next.delete(id);
                return next;
              })
            }
          />
          {shown.length >= limit && (
            <button type="button" onClick={() => setLimit(limit + STEP)}>
              Show more
            </button>
          )}
        </>
      )}
    </>
  );
}
