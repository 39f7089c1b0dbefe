import type { Schemas } from '@pipewright/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link } from 'wouter';
import { dataOf, firstElements } from '../api/data.js';
import { useLiveQuery } from '../api/live.js';
import { useProject } from '../api/project.js';
import { ConfirmButton } from '../ui/confirm.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { Scratchpad } from '../ui/scratchpad.js';
import { isActive, StatusBadge } from '../ui/status.js';
import { TaskGraph, taskLabel } from '../ui/task-graph.js';
import { formatDuration, formatTime } from '../ui/time.js';
import { Timeline } from '../ui/timeline.js';
import { prepareGraphLayout } from '../ui/use-graph-layout.js';

/** Tasks of one pipeline the page shows at most (a pipeline has a few hundred at the very most). */
const MAX_TASKS = 2000;

export function PipelinePage({ id }: { id: string }) {
  const { project, client, path } = useProject();
  const queries = useQueryClient();
  // The graph's layout worker loads while the tasks are on their way.
  useEffect(prepareGraphLayout, []);
  const pipeline = useLiveQuery({
    queryKey: ['pipeline', id],
    queryFn: () => dataOf(client.GET('/pipelines/id/{id}', { params: { path: { id } } })),
    live: (data) => isActive(data?.status),
  });
  const tasks = useLiveQuery({
    queryKey: ['pipeline', id, 'tasks'],
    queryFn: () => firstElements(client, '/tasks', { pipeline_id: id, size: 100 }, MAX_TASKS),
    live: (data) => isActive(pipeline.data?.status) || (data?.some((t) => isActive(t.status)) ?? true),
  });
  if (pipeline.error) return <ErrorNotice error={pipeline.error} />;
  if (!pipeline.data) return <Loading what="pipeline" />;
  const p = pipeline.data;
  const refresh = () => queries.invalidateQueries({ queryKey: ['pipeline', id] });
  const act = (action: 'abort' | 'restart' | 'restart_from_failure') => async () => {
    await client.POST(`/pipelines/id/{id}/${action}`, { params: { path: { id } } });
    await refresh();
    await queries.invalidateQueries({ queryKey: ['pipelines', project.id] });
  };
  const taskPath = (taskId: string) => path('tasks', taskId);
  return (
    <>
      <PageTitle title={`${p.name} · pipeline`}>
        Pipeline {p.name} <StatusBadge status={p.status} />
      </PageTitle>
      <dl className="facts">
        <dt>Id</dt>
        <dd className="mono">{p.id}</dd>
        <dt>Created</dt>
        <dd>{formatTime(p.creation_time)}</dd>
        <dt>Started</dt>
        <dd>{formatTime(p.start_time)}</dd>
        <dt>Ended</dt>
        <dd>{formatTime(p.end_time)}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(p.start_time, p.end_time)}</dd>
      </dl>
      <div className="actions">
        <ConfirmButton
          danger
          question={`Abort pipeline ${p.name}? Its running steps are stopped.`}
          confirmLabel="Abort"
          disabled={!isActive(p.status)}
          onConfirm={act('abort')}
        >
          Abort
        </ConfirmButton>
        <ConfirmButton
          question={`Restart every task of pipeline ${p.name}?`}
          confirmLabel="Restart"
          disabled={isActive(p.status)}
          onConfirm={act('restart')}
        >
          Restart
        </ConfirmButton>
        <ConfirmButton
          question={`Restart the failed and aborted tasks of pipeline ${p.name}, and what depends on them?`}
          confirmLabel="Restart from failure"
          disabled={p.status !== 'failed' && p.status !== 'aborted'}
          onConfirm={act('restart_from_failure')}
        >
          Restart from failure
        </ConfirmButton>
      </div>
      <section aria-labelledby="graph-heading">
        <h2 id="graph-heading">Tasks</h2>
        {tasks.error && <ErrorNotice error={tasks.error} />}
        {!tasks.data && !tasks.error && <Loading what="tasks" />}
        {tasks.data && <TaskGraph tasks={tasks.data} taskPath={taskPath} />}
        {tasks.data?.some((t) => t.failure_message) && (
          <ul className="failures">
            {tasks.data
              .filter((t) => t.failure_message)
              .map((t) => (
                <li key={t.id}>
                  <Link href={taskPath(t.id)}>{taskLabel(t, tasks.data)}</Link>: {t.failure_message}
                </li>
              ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        {tasks.data && <Timeline tasks={tasks.data} taskPath={taskPath} />}
      </section>
      <Origin pipeline={p} />
      <Scratchpad pipelineId={p.id} />
    </>
  );
}

/** The event that started the pipeline, and the command or trigger behind it. */
function Origin({ pipeline }: { pipeline: Schemas['Pipeline'] }) {
  const { client, path } = useProject();
  const event = useQuery({
    queryKey: ['pipeline', pipeline.id, 'event'],
    queryFn: () => dataOf(client.GET('/events/id/{id}', { params: { path: { id: pipeline.event_id } } })),
  });
  const sourceId = pipeline.command_id ?? pipeline.trigger_id;
  const source = useQuery({
    queryKey: ['resource', sourceId],
    queryFn: () => dataOf(client.GET('/resources/id/{id}', { params: { path: { id: sourceId ?? '' } } })),
    enabled: sourceId !== undefined,
  });
  const sourceName = source.data?.spec.name;
  return (
    <section aria-labelledby="origin-heading">
      <h2 id="origin-heading">Started by</h2>
      <p>
        {pipeline.command_id ? 'Command ' : pipeline.trigger_id ? 'Trigger ' : ''}
        {pipeline.command_id && sourceName ? (
          <Link href={path('commands', sourceName)}>{sourceName}</Link>
        ) : (
          (sourceName ?? (sourceId ? <span className="mono">{sourceId} (deleted)</span> : null))
        )}
        {' · event '}
        <Link href={path('events', pipeline.event_id)}>
          {event.data ? `${event.data.connector}/${event.data.name}` : pipeline.event_id}
        </Link>
        {' at '}
        {formatTime(pipeline.event_time)}
      </p>
      {event.error && <ErrorNotice error={event.error} />}
      {event.data && <pre className="json">{JSON.stringify(event.data.data, null, 2)}</pre>}
    </section>
  );
}
