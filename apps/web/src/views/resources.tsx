import type { Schemas } from '@pipewright/client';
import { useQuery } from '@tanstack/react-query';
import { Fragment, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { stringify } from 'yaml';
import { dataOf, firstElements } from '../api/data.js';
import { useProject } from '../api/project.js';
import { type ReferenceGroup, type ResourceType, resourceReferences } from '../api/resource-references.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { formatTime } from '../ui/time.js';

type Resource = Schemas['Resource'];

const TYPES: ResourceType[] = ['command', 'pipeline', 'task', 'trigger'];
/** The most resources a project holds (a resource set has at most 10,000 specs): all of them. */
const MAX_RESOURCES = 10_000;
/** Next ticks are read again once the first has passed, and at least this often. */
const TICKS_REFRESH_MS = 60_000;

export const isResourceType = (type: string | undefined): type is ResourceType =>
  TYPES.includes(type as ResourceType);

const isTimeTrigger = (resource: Resource) =>
  resource.spec.type === 'trigger' && resource.spec.data.connector === 'time';

/**
 * The installed resources of a project by type, each with its spec as YAML, the resources it
 * names or is named by (computed here from the whole list), and for a time trigger its next
 * ticks. `name` opens that resource, as the links between resources do.
 */
export function ResourcesPage({
  type = 'command',
  name,
}: {
  type?: ResourceType;
  name?: string | undefined;
}) {
  const { project, client, path } = useProject();
  const [, navigate] = useLocation();
  const resources = useQuery({
    queryKey: ['resources', project.id],
    queryFn: () => firstElements(client, '/resources', { sort: 'name', size: 100 }, MAX_RESOURCES),
  });
  const referencesOf = useMemo(() => resourceReferences(resources.data ?? []), [resources.data]);
  const shown = resources.data?.filter((resource) => resource.spec.type === type);
  return (
    <>
      <PageTitle title={`Resources · ${project.name}`}>Resources</PageTitle>
      <fieldset className="tabs">
        <legend className="visually-hidden">Type</legend>
        {TYPES.map((t) => (
          <label key={t} className={t === type ? 'selected' : undefined}>
            <input
              type="radio"
              name="type"
              value={t}
              checked={t === type}
              onChange={() => navigate(path('resources', t))}
            />
            {t}s
          </label>
        ))}
      </fieldset>
      {resources.error && <ErrorNotice error={resources.error} />}
      {!resources.data && !resources.error && <Loading what="resources" />}
      {shown?.length === 0 && <p className="muted">No {type} installed.</p>}
      {shown?.map((resource) => (
        <ResourceDetails
          key={resource.id}
          resource={resource}
          references={referencesOf(resource)}
          selected={resource.spec.name === name}
        />
      ))}
    </>
  );
}

/** One resource, folded; its details are made when it is opened (a project may hold thousands). */
function ResourceDetails({
  resource,
  references,
  selected,
}: {
  resource: Resource;
  references: ReferenceGroup[];
  selected: boolean;
}) {
  const { path } = useProject();
  const [open, setOpen] = useState(selected);
  const summary = useRef<HTMLElement>(null);
  useEffect(() => {
    // Followed from a link: open it and bring it to the eye and the keyboard.
    if (!selected) return;
    setOpen(true);
    summary.current?.focus();
  }, [selected]);
  const { spec } = resource;
  return (
    <details
      className="resource"
      open={open}
      onToggle={(event) => setOpen(event.currentTarget.open)}
      aria-label={`${spec.type} ${spec.name}`}
    >
      <summary ref={summary}>
        <strong>{spec.name}</strong>
        {resource.disabled ? ' (disabled)' : ''}
        <span className="muted small"> · updated {formatTime(resource.update_time)}</span>
      </summary>
      {open && (
        <>
          {spec.description && <p>{spec.description}</p>}
          {(references.length > 0 || isTimeTrigger(resource)) && (
            <dl className="facts">
              {references.map((group) => (
                <Fragment key={group.heading}>
                  <dt>{group.heading}</dt>
                  <dd>
                    {group.names.map((referenced, index) => (
                      <Fragment key={referenced}>
                        {index > 0 && ', '}
                        <Link href={path('resources', group.type, referenced)}>{referenced}</Link>
                      </Fragment>
                    ))}
                  </dd>
                </Fragment>
              ))}
              {isTimeTrigger(resource) && <NextTicks resource={resource} />}
            </dl>
          )}
          <pre className="yaml">{stringify(spec)}</pre>
        </>
      )}
    </details>
  );
}

/** The next ticks of a time trigger, as the server computes them from its schedule. */
function NextTicks({ resource }: { resource: Resource }) {
  const { client } = useProject();
  const ticks = useQuery({
    queryKey: ['next-ticks', resource.id],
    queryFn: () =>
      dataOf(client.GET('/resources/id/{id}/next_ticks', { params: { path: { id: resource.id } } })),
    refetchInterval: (query) => {
      const first = query.state.data?.next_ticks[0];
      const untilFirst = first ? Date.parse(first) - Date.now() + 1000 : TICKS_REFRESH_MS;
      return Math.min(Math.max(untilFirst, 1000), TICKS_REFRESH_MS);
    },
  });
  return (
    <>
      <dt>Next ticks</dt>
      <dd>
        {ticks.error && <ErrorNotice error={ticks.error} />}
        {!ticks.data && !ticks.error && <Loading what="next ticks" />}
        {ticks.data?.next_ticks.length === 0 && 'none: its one time has passed'}
        {ticks.data && ticks.data.next_ticks.length > 0 && (
          <ol className="ticks" aria-label={`Next ticks of ${resource.spec.name}`}>
            {ticks.data.next_ticks.map((tick) => (
              <li key={tick}>
                <time dateTime={tick} title={tick}>
                  {formatTime(tick)}
                </time>
              </li>
            ))}
          </ol>
        )}
        {resource.disabled && <p className="muted small">Disabled: its ticks pass without running.</p>}
      </dd>
    </>
  );
}
