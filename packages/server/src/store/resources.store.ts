import type { Schemas } from '@pipewright/types';
import { type SqlBool, sql } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { InstalledResource } from '../domain/resources/diff.js';
import type { Db } from './db.js';
import { type QueryBuilder, sqlite } from './dialect.js';
import { paginate } from './paginate.js';
import type { Executor } from './sql.js';

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

/** A change of an installation. */
export type StagedChange =
  | { change: 'create' | 'update'; id: string; spec: Resource['spec'] }
  | { change: 'delete'; id: string };

/** Where an installation writes: its project, and the update_time of what it changes. */
export interface InstallationTarget {
  installation: string;
  project_id: string;
  org_id: string;
  time: string;
}

/** The row of a new resource, its spec stored exactly as given, in its JSON text. */
const newRow = (target: InstallationTarget, id: string, spec: Resource['spec']) => ({
  ...target,
  id,
  type: spec.type,
  name: spec.name,
  spec: JSON.stringify(spec),
});

// The resources as readers see them while installations write theirs a slice at a time
// (migration 019): a row marked by an installation not yet applied shows as it was (a new one
// not at all), and one marked by an applied installation as that installation made it (a
// deleted one not at all), until the mark is folded into it. Triggers are never marked, which
// is why other stores may read them from the table itself. SQLite flattens this into each
// query, which keeps its indexes (checked by test/unit/store/resource-queries.test.ts).
function visibleResources(q: QueryBuilder) {
  return q
    .selectFrom('resources as r')
    .leftJoin('resource_installations as i', 'i.id', 'r.installation')
    .select((eb) => {
      const appliedUpdate = eb.and([
        eb('r.staged', '=', sql.lit('update')),
        eb.ref('i.applied').$castTo<SqlBool>(),
      ]);
      return [
        'r.id',
        'r.org_id',
        'r.project_id',
        'r.type',
        'r.name',
        'r.creation_time',
        'r.disabled',
        eb
          .case()
          .when(appliedUpdate)
          .then(eb.ref('i.time'))
          .else(eb.ref('r.update_time'))
          .end()
          .as('update_time'),
        eb.case().when(appliedUpdate).then(eb.ref('r.staged_spec')).else(eb.ref('r.spec')).end().as('spec'),
      ];
    })
    .where((eb) =>
      eb.or([
        eb('r.installation', 'is', null),
        eb
          .case('r.staged')
          .when(sql.lit('create'))
          .then(eb('i.applied', '=', eb.lit(1)))
          .when(sql.lit('delete'))
          .then(eb('i.applied', '=', eb.lit(0)))
          .else(eb.lit(1).$castTo<SqlBool>())
          .end(),
      ]),
    );
}

/**
 * The same, as SQL text for the statements still prepared here; its values are literals, so
 * that it takes no parameters.
 */
export const VISIBLE_RESOURCES = `(${visibleResources(sqlite.q).compile().sql})`;

export function createResourceStore(db: Db, q: QueryBuilder, x: Executor) {
  const byId = db.prepare<[string, string], ResourceRow>(
    `SELECT * FROM ${VISIBLE_RESOURCES} WHERE project_id = ? AND id = ?`,
  );
  const byTypeAndName = db.prepare<[string, string, string], ResourceRow>(
    `SELECT * FROM ${VISIBLE_RESOURCES} WHERE project_id = ? AND type = ? AND name = ?`,
  );
  const installedPage = db.prepare<[string, string, number], InstalledResource>(
    `SELECT id, type, name, spec FROM ${VISIBLE_RESOURCES} WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?`,
  );

  // Installations: begun, written hidden, applied, then folded into the rows (or undone).
  const begin = db.prepare<{ installation: string; project_id: string; time: string }>(
    'INSERT INTO resource_installations (id, project_id, time) VALUES (@installation, @project_id, @time)',
  );
  const markApplied = db.prepare<[string]>('UPDATE resource_installations SET applied = 1 WHERE id = ?');
  const unfinished = db.prepare<[string], { id: string }>(
    'SELECT id FROM resource_installations WHERE project_id = ? ORDER BY id',
  );
  const installationOf = db.prepare<[string], { applied: number; time: string }>(
    'SELECT applied, time FROM resource_installations WHERE id = ?',
  );
  const forget = db.prepare<[string]>('DELETE FROM resource_installations WHERE id = ?');
  const insert = db.prepare<InstallationTarget & { id: string; type: string; name: string; spec: string }>(
    `INSERT INTO resources (id, org_id, project_id, type, name, creation_time, update_time, spec)
     VALUES (@id, @org_id, @project_id, @type, @name, @time, @time, @spec)`,
  );
  const insertHidden = db.prepare<
    InstallationTarget & { id: string; type: string; name: string; spec: string }
  >(
    `INSERT INTO resources (id, org_id, project_id, type, name, creation_time, update_time, spec, installation, staged)
     VALUES (@id, @org_id, @project_id, @type, @name, @time, @time, @spec, @installation, 'create')`,
  );
  const update = db.prepare<{ project_id: string; id: string; spec: string; time: string }>(
    'UPDATE resources SET spec = @spec, update_time = @time WHERE project_id = @project_id AND id = @id',
  );
  const mark = db.prepare<{
    project_id: string;
    id: string;
    installation: string;
    staged: string;
    spec: string | null;
  }>(
    `UPDATE resources SET installation = @installation, staged = @staged, staged_spec = @spec
     WHERE project_id = @project_id AND id = @id`,
  );
  const remove = db.prepare<{ project_id: string; id: string }>(
    'DELETE FROM resources WHERE project_id = @project_id AND id = @id',
  );
  // A slice of the rows an installation marked: those it removes (deleted ones once applied,
  // new ones if undone) go, the others get its change (applied) or lose it (undone).
  const MARKED = 'SELECT rowid FROM resources WHERE installation = @installation';
  const dropMarked = db.prepare<{ installation: string; gone: string; size: number }>(
    `DELETE FROM resources WHERE rowid IN (${MARKED} AND staged = @gone LIMIT @size)`,
  );
  const foldMarked = db.prepare<{ installation: string; time: string; size: number }>(
    `UPDATE resources SET spec = coalesce(staged_spec, spec),
       update_time = CASE staged WHEN 'update' THEN @time ELSE update_time END,
       installation = NULL, staged = NULL, staged_spec = NULL
     WHERE rowid IN (${MARKED} LIMIT @size)`,
  );
  const unmark = db.prepare<{ installation: string; size: number }>(
    `UPDATE resources SET installation = NULL, staged = NULL, staged_spec = NULL
     WHERE rowid IN (${MARKED} LIMIT @size)`,
  );
  return {
    get(projectId: string, id: string): Resource | undefined {
      const row = byId.get(projectId, id);
      return row && toResource(row);
    },
    getByTypeAndName(projectId: string, type: ResourceType, name: string): Resource | undefined {
      const row = byTypeAndName.get(projectId, type, name);
      return row && toResource(row);
    },
    list(projectId: string, type: ResourceType | undefined, request: PageRequest): Promise<Page<Resource>> {
      let from = q.selectFrom(visibleResources(q).as('resources')).where('project_id', '=', projectId);
      if (type !== undefined) from = from.where('type', '=', type);
      return paginate<ResourceRow, Resource>(x, {
        from,
        sorts: { id: 'id', name: 'name' },
        request,
        toElement: toResource,
      });
    },
    /** Up to `size` resources of the project after the id `afterId` (`''` for the first page), by id. */
    installedPage(projectId: string, afterId: string, size: number): InstalledResource[] {
      return installedPage.all(projectId, afterId, size);
    },
    /** Starts an installation into a project: what it writes stays hidden until it is applied. */
    beginInstallation(target: InstallationTarget): void {
      begin.run(target);
    },
    /** Installations of the project begun and not finished (a crash or a failure cut them short). */
    unfinishedInstallations(projectId: string): string[] {
      return unfinished.all(projectId).map((row) => row.id);
    },
    /** Writes changes of an installation hidden from readers (never of triggers: see VISIBLE_RESOURCES). */
    writeHidden(target: InstallationTarget, changes: readonly StagedChange[]): void {
      for (const staged of changes) {
        const at = { project_id: target.project_id, id: staged.id, installation: target.installation };
        if (staged.change === 'delete') mark.run({ ...at, staged: 'delete', spec: null });
        else if (staged.change === 'update')
          mark.run({ ...at, staged: 'update', spec: JSON.stringify(staged.spec) });
        else insertHidden.run(newRow(target, staged.id, staged.spec));
      }
    },
    /**
     * Writes changes at once, visible to every reader when their transaction commits; to be
     * called in the transaction that applies the installation.
     */
    writeVisible(target: InstallationTarget, changes: readonly StagedChange[]): void {
      const at = { project_id: target.project_id, time: target.time };
      for (const staged of changes) {
        if (staged.change === 'delete') remove.run({ project_id: target.project_id, id: staged.id });
        else if (staged.change === 'update')
          update.run({ ...at, id: staged.id, spec: JSON.stringify(staged.spec) });
        else insert.run(newRow(target, staged.id, staged.spec));
      }
    },
    /** Readers see what the installation wrote hidden, all at once. */
    applyInstallation(installation: string): void {
      markApplied.run(installation);
    },
    /**
     * Folds up to `size` marks of an installation into their rows, as it was applied or, if
     * it was not, as if it never was; forgets the installation once none is left. Returns
     * whether it is finished.
     */
    finishInstallation(installation: string, size: number): boolean {
      const found = installationOf.get(installation);
      if (!found) return true;
      const applied = found.applied === 1;
      const dropped = dropMarked.run({ installation, gone: applied ? 'delete' : 'create', size }).changes;
      const rest = size - dropped;
      const folded =
        rest === 0
          ? 0
          : applied
            ? foldMarked.run({ installation, time: found.time, size: rest }).changes
            : unmark.run({ installation, size: rest }).changes;
      if (dropped + folded < size) forget.run(installation);
      return dropped + folded < size;
    },
  };
}
