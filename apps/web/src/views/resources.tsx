import type { Schemas } from '@pipewright/client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { stringify } from 'yaml';
import { firstElements } from '../api/data.js';
import { useProject } from '../api/project.js';
import { ErrorNotice, Loading } from '../ui/notices.js';
import { PageTitle } from '../ui/page.js';
import { formatTime } from '../ui/time.js';

type ResourceType = Schemas['ResourceSpec']['type'];
const TYPES: ResourceType[] = ['command', 'pipeline', 'task', 'trigger'];

/** The installed resources of a project by type, each with its spec as YAML. */
export function ResourcesPage() {
  const { project, client } = useProject();
  const [type, setType] = useState<ResourceType>('command');
  const resources = useQuery({
    queryKey: ['resources', project.id, type],
    queryFn: () => firstElements(client, '/resources', { type, size: 100 }, 1000),
  });
  return (
    <>
      <PageTitle title={`Resources · ${project.name}`}>Resources</PageTitle>
      <fieldset className="tabs">
        <legend className="visually-hidden">Type</legend>
        {TYPES.map((t) => (
          <label key={t} className={t === type ? 'selected' : undefined}>
            <input type="radio" name="type" value={t} checked={t === type} onChange={() => setType(t)} />
            {t}s
          </label>
        ))}
      </fieldset>
      {resources.error && <ErrorNotice error={resources.error} />}
      {!resources.data && !resources.error && <Loading what="resources" />}
      {resources.data?.length === 0 && <p className="muted">No {type} installed.</p>}
      {resources.data?.map((resource) => (
        <details key={resource.id} className="resource">
          <summary>
            <strong>{resource.spec.name}</strong>
            {resource.disabled ? ' (disabled)' : ''}
            <span className="muted small"> · updated {formatTime(resource.update_time)}</span>
          </summary>
          {resource.spec.description && <p>{resource.spec.description}</p>}
          <pre className="yaml">{stringify(resource.spec)}</pre>
        </details>
      ))}
    </>
  );
}
