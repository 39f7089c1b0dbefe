import type { Schemas } from '@pipewright/client';
import { Link } from 'wouter';
import { taskLabel } from './task-graph.js';
import { formatDuration } from './time.js';

type Task = Schemas['Task'];

/**
 * When each task ran, as bars on one time axis from the first start to the last end (or now,
 * while tasks run). Tasks that have not started have no bar.
 */
export function Timeline({ tasks, taskPath }: { tasks: Task[]; taskPath: (id: string) => string }) {
  const started = tasks
    .filter((t) => t.start_time)
    .sort((a, b) => Date.parse(a.start_time ?? '') - Date.parse(b.start_time ?? ''));
  if (started.length === 0) return <p className="muted">No task has started yet.</p>;
  const now = Date.now();
  const from = Math.min(...started.map((t) => Date.parse(t.start_time ?? '')));
  const to = Math.max(...started.map((t) => (t.end_time ? Date.parse(t.end_time) : now)), from + 1);
  const percent = (time: number) => ((time - from) / (to - from)) * 100;
  return (
    <ol className="timeline">
      {started.map((task) => {
        const start = Date.parse(task.start_time ?? '');
        const end = task.end_time ? Date.parse(task.end_time) : now;
        return (
          <li key={task.id}>
            <Link href={taskPath(task.id)} className="timeline-label">
              {taskLabel(task, tasks)}
            </Link>
            <span className="timeline-track">
              <span
                className={`timeline-bar status-${task.status}`}
                style={{
                  left: `${percent(start)}%`,
                  width: `${Math.max(percent(end) - percent(start), 0.5)}%`,
                }}
              />
            </span>
            <span className="timeline-duration">{formatDuration(task.start_time, task.end_time)}</span>
          </li>
        );
      })}
    </ol>
  );
}
