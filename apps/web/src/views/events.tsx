import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { dataOf, firstElements } from '../api/data.js';
import { useProject } from '../api/project.js';
import { ConfirmButton } from '../ui/confirm.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { TableScroll } from '../ui/table-scroll.js';
import { formatTime } from '../ui/time.js';

const CONNECTORS = ['custom', 'time', 'command'];

export function EventsPage() {
  const { project, client, path } = useProject();
  const [connector, setConnector] = useState('');
  const [name, setName] = useState('');
  const [limit, setLimit] = useState(100);
  const events = useQuery({
    queryKey: ['events', project.id, connector, name.trim(), limit],
    queryFn: () =>
      firstElements(
        client,
        '/events',
        {
          sort: 'id',
          order: 'desc',
          size: 100,
          ...(connector ? { connector } : {}),
          ...(name.trim() ? { name: name.trim() } : {}),
        },
        limit,
      ),
  });
  return (
    <>
      <PageTitle title={`Events · ${project.name}`}>Events</PageTitle>
      <SendEvent />
      <h2>Stored events</h2>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Connector
          <select value={connector} onChange={(event) => setConnector(event.target.value)}>
            <option value="">any</option>
            {CONNECTORS.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </label>
        <label>
          Name is
          <input type="search" value={name} onChange={(event) => setName(event.target.value)} />
        </label>
      </form>
      {events.error && <ErrorNotice error={events.error} />}
      {!events.data && !events.error && <Loading what="events" />}
      {events.data && (
        <TableScroll label="Events">
          <table>
            <caption>{events.data.length} newest events</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Time</th>
                <th scope="col">Replay of</th>
              </tr>
            </thead>
            <tbody>
              {events.data.map((event) => (
                <tr key={event.id}>
                  <td>
                    <Link href={path('events', event.id)}>
                      {event.connector}/{event.name}
                    </Link>
                    <div className="muted small mono">{event.id}</div>
                  </td>
                  <td className="time">{formatTime(event.event_time)}</td>
                  <td className="mono small">{event.original_event_id ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {events.data && events.data.length >= limit && (
        <button type="button" onClick={() => setLimit(limit + 100)}>
          Show more
        </button>
      )}
    </>
  );
}

/** Sends a custom event; the triggers that accept it store a copy each and start their pipelines. */
function SendEvent() {
  const { project, client, path } = useProject();
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [data, setData] = useState('{}');
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<{ id: string }[]>();
  const send = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setResult(undefined);
    try {
      const parsed: unknown = JSON.parse(data);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new Error('the data must be a JSON object');
      }
      const created = await dataOf(
        client.POST('/events', {
          body: { connector: 'custom', name, data: parsed as Record<string, unknown> },
        }),
      );
      setResult(created);
      await queries.invalidateQueries({ queryKey: ['events', project.id] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section aria-labelledby="send-heading">
      <h2 id="send-heading">Send a custom event</h2>
      <form className="stack" onSubmit={(event) => void send(event)}>
        <label>
          Event name
          <input required value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label>
          Data (a JSON object)
          <textarea
            rows={4}
            className="mono"
            value={data}
            onChange={(event) => setData(event.target.value)}
          />
        </label>
        <div className="actions">
          <button type="submit" className="primary">
            Send event
          </button>
        </div>
        {error !== undefined && <ErrorNotice error={error} />}
        {result && (
          <p role="status">
            {result.length === 0
              ? 'No trigger accepted the event: nothing was stored.'
              : `Stored ${result.length} event(s): `}
            {result.map((created) => (
              <Link key={created.id} href={path('events', created.id)} className="mono">
                {created.id}{' '}
              </Link>
            ))}
          </p>
        )}
      </form>
    </section>
  );
}

export function EventPage({ id }: { id: string }) {
  const { project, client, path } = useProject();
  const queries = useQueryClient();
  const [, navigate] = useLocation();
  const event = useQuery({
    queryKey: ['event', id],
    queryFn: () => dataOf(client.GET('/events/id/{id}', { params: { path: { id } } })),
  });
  if (event.error) return <ErrorNotice error={event.error} />;
  if (!event.data) return <Loading what="event" />;
  const e = event.data;
  const replay = async () => {
    const copy = await dataOf(client.POST('/events/id/{id}/replay', { params: { path: { id } } }));
    await queries.invalidateQueries({ queryKey: ['events', project.id] });
    navigate(path('events', copy.id));
  };
  return (
    <>
      <PageTitle title={`${e.connector}/${e.name} · event`}>
        Event {e.connector}/{e.name}
      </PageTitle>
      <dl className="facts">
        <dt>Id</dt>
        <dd className="mono">{e.id}</dd>
        <dt>Event time</dt>
        <dd>{formatTime(e.event_time)}</dd>
        <dt>Stored</dt>
        <dd>{formatTime(e.creation_time)}</dd>
        {e.original_event_id && (
          <>
            <dt>Replay of</dt>
            <dd>
              <Link href={path('events', e.original_event_id)} className="mono">
                {e.original_event_id}
              </Link>
            </dd>
          </>
        )}
      </dl>
      <div className="actions">
        <ConfirmButton
          question={`Replay event ${e.connector}/${e.name}? A copy is stored and starts its pipelines again.`}
          confirmLabel="Replay"
          onConfirm={replay}
        >
          Replay
        </ConfirmButton>
      </div>
      <h2>Data</h2>
      <pre className="json">{JSON.stringify(e.data, null, 2)}</pre>
    </>
  );
}
