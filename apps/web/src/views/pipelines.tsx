import type { Schemas } from '@pipewright/client';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { firstElements } from '../api/data.js';
import { useLiveQuery } from '../api/live.js';
import { useProject } from '../api/project.js';
import { ConfirmButton } from '../ui/confirm.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { PipelineTable } from '../ui/pipeline-table.js';
import { isActive, STATUSES } from '../ui/status.js';

type Status = Schemas['PipelineStatus'];
const STEP = 100;

/**
 * Pipelines, newest first. The status filter is the API's; the name and date filters apply
 * to the newest pipelines loaded (the API filters neither), which "Show more" extends.
 */
export function PipelinesPage() {
  const { project, client } = useProject();
  const queries = useQueryClient();
  const [status, setStatus] = useState<Status | ''>('');
  const [name, setName] = useState('');
  const [since, setSince] = useState('');
  const [limit, setLimit] = useState(STEP);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const list = useLiveQuery({
    queryKey: ['pipelines', project.id, 'list', status, limit],
    queryFn: () =>
      firstElements(
        client,
        '/pipelines',
        { sort: 'creation_time', order: 'desc', size: 100, ...(status ? { status } : {}) },
        limit,
      ),
    live: (pipelines) => pipelines?.some((p) => isActive(p.status)) ?? false,
  });
  const sinceTime = since ? new Date(`${since}T00:00:00`).getTime() : undefined;
  const shown = (list.data ?? []).filter(
    (p) =>
      p.name.toLowerCase().includes(name.trim().toLowerCase()) &&
      (sinceTime === undefined || Date.parse(p.creation_time) >= sinceTime),
  );
  const failedSelected = shown.filter((p) => p.status === 'failed' && selected.has(p.id));
  const restartFailed = async () => {
    for (const pipeline of failedSelected) {
      await client.POST('/pipelines/id/{id}/restart_from_failure', { params: { path: { id: pipeline.id } } });
    }
    setSelected(new Set());
    await queries.invalidateQueries({ queryKey: ['pipelines', project.id] });
  };
  return (
    <>
      <PageTitle title={`Pipelines · ${project.name}`}>Pipelines</PageTitle>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value as Status | '')}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name contains
          <input type="search" value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label>
          Created since
          <input type="date" value={since} onChange={(event) => setSince(event.target.value)} />
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
            caption={`${shown.length} of the ${list.data.length} newest pipelines${status ? ` ${status}` : ''}`}
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
          {list.data.length >= limit && (
            <button type="button" onClick={() => setLimit(limit + STEP)}>
              Show more
            </button>
          )}
        </>
      )}
    </>
  );
}
