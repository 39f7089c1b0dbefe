import type { Schemas } from '@pipewright/client';
import { Link } from 'wouter';
import { dataOf, firstElements } from '../api/data.js';
import { useLiveQuery } from '../api/live.js';
import { useProject } from '../api/project.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { PipelineTable } from '../ui/pipeline-table.js';
import { STATUSES, StatusBadge } from '../ui/status.js';
import { TableScroll } from '../ui/table-scroll.js';

const DAYS = 7;
/** The home page counts at most this many recent pipelines: enough to see a trend, bounded. */
const COUNTED = 1000;

type Pipeline = Schemas['Pipeline'];

/** A project at a glance: what failed, what runs now, and the runs of the last days by status. */
export function HomePage() {
  const { project, client, path } = useProject();
  const recent = (status: 'failed' | 'started') =>
    dataOf(
      client.GET('/pipelines', {
        params: { query: { status, sort: 'creation_time', order: 'desc', size: 10 } },
      }),
    ).then((page) => page.elements);
  const failed = useLiveQuery({
    queryKey: ['pipelines', project.id, 'failed'],
    queryFn: () => recent('failed'),
    live: () => true,
  });
  const running = useLiveQuery({
    queryKey: ['pipelines', project.id, 'started'],
    queryFn: () => recent('started'),
    live: () => true,
  });
  const days = useLiveQuery({
    queryKey: ['pipeline-days', project.id],
    queryFn: () =>
      recentDays(
        firstElements(client, '/pipelines', { sort: 'creation_time', order: 'desc', size: 100 }, COUNTED),
      ),
    // Up to ten pages: asked again on returning to the tab, not every second.
    live: () => false,
  });
  return (
    <>
      <PageTitle title={project.name}>{project.name}</PageTitle>
      <section aria-labelledby="failed-heading">
        <h2 id="failed-heading">Failed recently</h2>
        {failed.error && <ErrorNotice error={failed.error} />}
        {!failed.data && !failed.error && <Loading what="failed pipelines" />}
        {failed.data?.length === 0 && <p className="muted">No failed pipeline.</p>}
        {failed.data && failed.data.length > 0 && (
          <PipelineTable caption="The last failed pipelines" pipelines={failed.data} />
        )}
      </section>
      <section aria-labelledby="running-heading">
        <h2 id="running-heading">Running now</h2>
        {running.data?.length === 0 && <p className="muted">Nothing is running.</p>}
        {running.data && running.data.length > 0 && (
          <PipelineTable caption="Pipelines running now" pipelines={running.data} />
        )}
      </section>
      <section aria-labelledby="days-heading">
        <h2 id="days-heading">Last {DAYS} days</h2>
        {days.data && <DaysTable days={days.data.days} truncated={days.data.truncated} />}
        <p>
          <Link href={path('pipelines')}>All pipelines</Link>
        </p>
      </section>
    </>
  );
}

interface Day {
  date: string;
  /** The day as shown: no year, which a week never needs, so that the table fits a phone. */
  label: string;
  counts: Record<Schemas['PipelineStatus'], number>;
}

/** Counts the pipelines created in each of the last days, newest day first. */
async function recentDays(newestFirst: Promise<Pipeline[]>) {
  const since = new Date();
  since.setHours(0, 0, 0, 0);
  since.setDate(since.getDate() - (DAYS - 1));
  const pipelines = await newestFirst;
  const days: Day[] = [];
  for (let i = 0; i < DAYS; i++) {
    const date = new Date(since);
    date.setDate(since.getDate() + DAYS - 1 - i);
    days.push({
      date: date.toDateString(),
      label: date.toLocaleDateString(undefined, { weekday: 'short', month: 'short', day: 'numeric' }),
      counts: { failed: 0, started: 0, created: 0, aborted: 0, successful: 0 },
    });
  }
  for (const pipeline of pipelines) {
    const day = days.find((d) => d.date === new Date(pipeline.creation_time).toDateString());
    if (day) day.counts[pipeline.status] += 1;
  }
  const oldest = pipelines.at(-1);
  return {
    days,
    truncated: pipelines.length >= COUNTED && oldest !== undefined && new Date(oldest.creation_time) >= since,
  };
}

function DaysTable({ days, truncated }: { days: Day[]; truncated: boolean }) {
  return (
    <TableScroll label="Pipelines by day">
      <table className="days">
        <caption>
          Pipelines created each day, by status{truncated ? ` (the last ${COUNTED} only)` : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {STATUSES.map((status) => (
              <th scope="col" key={status} className="number">
                <StatusBadge status={status} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {days.map((day) => (
            <tr key={day.date}>
              <th scope="row">{day.label}</th>
              {STATUSES.map((status) => (
                <td key={status} className="number">
                  {day.counts[status]}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
