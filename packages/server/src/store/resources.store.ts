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

/** A change of an installation, staged before it is applied (see `stage`). */
export type StagedChange =
  | { change: 'create' | 'update'; id: string; spec: Resource['spec'] }
  | { change: 'delete'; id: string };

// An installation's changes wait in this table of the connection (TEMP: private to it, gone
// with it, never synced to disk) until they are applied together by three statements in one
// short transaction. Writing them there a slice at a time keeps the server answering while
// a large set is installed; applying them in SQL costs a fraction of a write per row from
// JavaScript. It is made here, not by a migration, because a TEMP table lives per connection.
const STAGING_TABLE = `CREATE TEMP TABLE IF NOT EXISTS resource_changes (
  installation TEXT NOT NULL,
  id TEXT NOT NULL,
  change TEXT NOT NULL CHECK (change IN ('create', 'update', 'delete')),
  type TEXT,
  name TEXT,
  spec TEXT,
  PRIMARY KEY (installation, id)
) WITHOUT ROWID`;

export function createResourceStore(db: Db) {
  const byId = db.prepare<[string, string], ResourceRow>(
    'SELECT * FROM resources WHERE project_id = ? AND id = ?',
  );
  const byTypeAndName = db.prepare<[string, string, string], ResourceRow>(
    'SELECT * FROM resources WHERE project_id = ? AND type = ? AND name = ?',
  );
  const installedPage = db.prepare<[string, string, number], InstalledResource>(
    'SELECT id, type, name, spec FROM resources WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?',
  );
  db.exec(STAGING_TABLE);
  const stageOne = db.prepare<[string, string, string, string | null, string | null, string | null]>(
    'INSERT INTO temp.resource_changes (installation, id, change, type, name, spec) VALUES (?, ?, ?, ?, ?, ?)',
  );
  // A deferred transaction: it writes the TEMP table only, so it takes no lock of the database.
  const stage = db.transaction((installation: string, changes: readonly StagedChange[]) => {
    for (const staged of changes) {
      if (staged.change === 'delete') stageOne.run(installation, staged.id, 'delete', null, null, null);
      else {
        const { spec } = staged;
        stageOne.run(installation, staged.id, staged.change, spec.type, spec.name, JSON.stringify(spec));
      }
    }
  });
  const applyDeletes = db.prepare<{ installation: string; project_id: string }>(
    `DELETE FROM resources WHERE project_id = @project_id AND id IN
       (SELECT id FROM temp.resource_changes WHERE installation = @installation AND change = 'delete')`,
  );
  const applyUpdates = db.prepare<{ installation: string; project_id: string; time: string }>(
    `UPDATE resources SET spec = c.spec, update_time = @time FROM temp.resource_changes c
     WHERE c.installation = @installation AND c.change = 'update'
       AND resources.id = c.id AND resources.project_id = @project_id`,
  );
  const applyCreates = db.prepare<{ installation: string; org_id: string; project_id: string; time: string }>(
    `INSERT INTO resources (id, org_id, project_id, type, name, creation_time, update_time, spec)
     SELECT id, @org_id, @project_id, type, name, @time, @time, spec FROM temp.resource_changes
     WHERE installation = @installation AND change = 'create' ORDER BY id`,
  );
  const unstage = db.prepare<[string]>('DELETE FROM temp.resource_changes WHERE installation = ?');
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
    /** Up to `size` resources of the project after the id `afterId` (`''` for the first page), by id. */
    installedPage(projectId: string, afterId: string, size: number): InstalledResource[] {
      return installedPage.all(projectId, afterId, size);
    },
    /** Adds changes to those of `installation`; a spec is stored exactly as given, in its JSON text. */
    stage(installation: string, changes: readonly StagedChange[]): void {
      stage(installation, changes);
    },
    /**
     * Applies the staged changes of `installation` to the project; to be called in a
     * transaction. Deletes go first, so that a name freed by a rename can be taken again.
     */
    applyStaged(installation: string, project: { id: string; org_id: string }, time: string): void {
      const target = { installation, project_id: project.id };
      applyDeletes.run(target);
      applyUpdates.run({ ...target, time });
      applyCreates.run({ ...target, org_id: project.org_id, time });
    },
    /** Forgets the staged changes of `installation`, applied or not. */
    unstage(installation: string): void {
      unstage.run(installation);
    },
  };
}
