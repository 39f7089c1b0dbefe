import type { Schemas } from '@pipewright/client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { dataOf } from '../api/data.js';
import { useLiveQuery } from '../api/live.js';
import { useProject } from '../api/project.js';
import { useTaskOutput } from '../api/task-output.js';
import { AnsiOutput, countMatches } from '../ui/ansi-output.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { isActive, StatusBadge } from '../ui/status.js';
import { formatDuration, formatTime } from '../ui/time.js';

type Step = Schemas['StepExecution'];

/** Step executions grouped by run, then attempt, in the order the API gives them. */
function byAttempt(steps: Step[]): { run: number; attempt: number; steps: Step[] }[] {
  const groups: { run: number; attempt: number; steps: Step[] }[] = [];
  for (const step of steps) {
    const last = groups.at(-1);
    if (last && last.run === step.run && last.attempt === step.attempt) last.steps.push(step);
    else groups.push({ run: step.run, attempt: step.attempt, steps: [step] });
  }
  return groups;
}

function download(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.click();
  URL.revokeObjectURL(url);
}

/** A task: every step of every attempt of every run, with its output as it is written. */
export function TaskPage({ id }: { id: string }) {
  const { client, path } = useProject();
  const [search, setSearch] = useState('');
  const task = useLiveQuery({
    queryKey: ['task', id],
    queryFn: () => dataOf(client.GET('/tasks/id/{id}', { params: { path: { id } } })),
    live: (data) => isActive(data?.status),
  });
  // Read again when the task's output stream or the project's stream of changes says they changed.
  const steps = useQuery({
    queryKey: ['task', id, 'steps'],
    queryFn: () => dataOf(client.GET('/tasks/id/{id}/steps', { params: { path: { id } } })),
  });
  const output = useTaskOutput(client, id, steps.data);
  if (task.error) return <ErrorNotice error={task.error} />;
  if (!task.data) return <Loading what="task" />;
  const t = task.data;
  const executions = (steps.data ?? []).map((step) => ({ ...step, output: output.outputOf(step) }));
  const matches = executions.reduce((sum, step) => sum + countMatches(step.output, search), 0);
  return (
    <>
      <PageTitle title={`${t.name} · task`}>
        Task {t.name}
        {(t.pipeline_task.nb_instances ?? 1) > 1 ? ` #${t.instance_id}` : ''}{' '}
        <StatusBadge status={t.status} />
      </PageTitle>
      <p>
        Pipeline <Link href={path('pipelines', t.pipeline_id)}>{t.pipeline_id}</Link>
      </p>
      <dl className="facts">
        <dt>Run</dt>
        <dd>{t.run}</dd>
        <dt>Retry</dt>
        <dd>{t.retry}</dd>
        <dt>Started</dt>
        <dd>{formatTime(t.start_time)}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(t.start_time, t.end_time)}</dd>
        {t.failure_message && (
          <>
            <dt>Failure</dt>
            <dd>{t.failure_message}</dd>
          </>
        )}
      </dl>
      <div className="filters">
        <label>
          Search the output
          <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} />
        </label>
        <span role="status">{search ? `${matches} match${matches === 1 ? '' : 'es'}` : ''}</span>
      </div>
      {steps.error && <ErrorNotice error={steps.error} />}
      {output.error !== undefined && <ErrorNotice error={output.error} />}
      {!steps.data && !steps.error && <Loading what="steps" />}
      {steps.data?.length === 0 && <p className="muted">No step has run yet.</p>}
      {byAttempt(executions).map((group) => (
        <section
          key={`${group.run}-${group.attempt}`}
          aria-labelledby={`attempt-${group.run}-${group.attempt}`}
        >
          <h2 id={`attempt-${group.run}-${group.attempt}`}>
            Run {group.run}, attempt {group.attempt + 1}
          </h2>
          {group.steps.map((step) => {
            const title = `Step ${step.index + 1}${step.label ? `: ${step.label}` : ''}`;
            return (
              <article key={step.index} className="step">
                <header className="step-header">
                  <h3>{title}</h3>
                  <StatusBadge status={step.status} />
                  {step.exit_code !== undefined && <span>exit code {step.exit_code}</span>}
                  <span className="muted">{formatDuration(step.start_time, step.end_time)}</span>
                  <button
                    type="button"
                    onClick={() =>
                      download(
                        `${t.name}-run${step.run}-attempt${step.attempt + 1}-step${step.index + 1}.log`,
                        step.output,
                      )
                    }
                  >
                    Download<span className="visually-hidden"> the output of {title}</span>
                  </button>
                </header>
                {step.output ? (
                  <AnsiOutput
                    output={step.output}
                    search={search}
                    label={`Output of ${title}, run ${step.run}, attempt ${step.attempt + 1}`}
                  />
                ) : (
                  <p className="muted">No output.</p>
                )}
                {step.output_truncated && <p className="muted">The output was cut at the server's limit.</p>}
              </article>
            );
          })}
        </section>
      ))}
    </>
  );
}
