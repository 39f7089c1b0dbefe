import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { InstalledResource } from '../domain/resource-diff.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

type Resource = Schemas['Resource'];
type ResourceType = Resource['spec']['type'];

interface ResourceRow extends Record<string, unknown> {
  id: string;
  org_id: string;
  project_id: string;
  type: ResourceType;
  name: string;
  creation_time: string;
  update_time: string;
  disabled: number;
  spec: string;
}

function toResource(row: ResourceRow): Resource {
  return {
    id: row.id,
    org_id: row.org_id,
    project_id: row.project_id,
    creation_time: row.creation_time,
    update_time: row.update_time,
    disabled: row.disabled === 1,
    spec: JSON.parse(row.spec) as Resource['spec'],
  };
}

export interface NewResource {
  id: string;
  org_id: string;
  project_id: string;
  creation_time: string;
  spec: Resource['spec'];
}

export function createResourceStore(db: Db) {
  const byId = db.prepare<[string, string], ResourceRow>(
    'SELECT * FROM resources WHERE project_id = ? AND id = ?',
  );
  const byTypeAndName = db.prepare<[string, string, string], ResourceRow>(
    'SELECT * FROM resources WHERE project_id = ? AND type = ? AND name = ?',
  );
  const installed = db.prepare<[string], InstalledResource>(
    'SELECT id, type, name, spec FROM resources WHERE project_id = ?',
  );
  const insert = db.prepare(
    `INSERT INTO resources (id, org_id, project_id, type, name, creation_time, update_time, spec)
     VALUES (@id, @org_id, @project_id, @type, @name, @creation_time, @creation_time, @spec)`,
  );
  const update = db.prepare('UPDATE resources SET spec = ?, update_time = ? WHERE id = ?');
  const remove = db.prepare('DELETE FROM resources WHERE id = ?');
  return {
    get(projectId: string, id: string): Resource | undefined {
      const row = byId.get(projectId, id);
      return row && toResource(row);
    },
    getByTypeAndName(projectId: string, type: ResourceType, name: string): Resource | undefined {
      const row = byTypeAndName.get(projectId, type, name);
      return row && toResource(row);
    },
    list(projectId: string, type: ResourceType | undefined, request: PageRequest): Page<Resource> {
      return paginate<ResourceRow, Resource>(db, {
        table: 'resources',
        where: type === undefined ? ['project_id = ?'] : ['project_id = ?', 'type = ?'],
        params: type === undefined ? [projectId] : [projectId, type],
        sorts: { id: 'id', name: 'name' },
        request,
        toElement: toResource,
      });
    },
    installed(projectId: string): InstalledResource[] {
      return installed.all(projectId);
    },
    /** Stores the spec exactly as given, in its JSON text. */
    insert(resource: NewResource): void {
      const { spec } = resource;
      insert.run({ ...resource, type: spec.type, name: spec.name, spec: JSON.stringify(spec) });
    },
    updateSpec(id: string, spec: Resource['spec'], updateTime: string): void {
      update.run(JSON.stringify(spec), updateTime, id);
    },
    delete(id: string): void {
      remove.run(id);
    },
  };
}
