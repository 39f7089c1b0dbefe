import type { Schemas } from '@pipewright/types';
import { sql } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { InstalledResource } from '../domain/resources/diff.js';
import type { QueryBuilder } from './dialect.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type Resource = Schemas['Resource'];
type ResourceType = Resource['spec']['type'];

interface ResourceRow {
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
        eb('i.applied', '=', sql.lit(1)),
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
          .else(eb.lit(true))
          .end(),
      ]),
    )
    .$castTo<ResourceRow>();
}

export function createResourceStore(q: QueryBuilder, x: Executor) {
  const visible = q.selectFrom(visibleResources(q).as('resources'));

  // Installations: begun, written hidden, applied, then folded into the rows (or undone). An
  // installation writes thousands of rows: their statements are prepared.
  const mark = prepared(
    5,
    (projectId: string, id: string, installation: string, staged: 'update' | 'delete', spec: string | null) =>
      q
        .updateTable('resources')
        .set({ installation, staged, staged_spec: spec })
        .where('project_id', '=', projectId)
        .where('id', '=', id),
  );
  // A new resource, its spec stored exactly as given, in its JSON text; marked by its
  // installation when written hidden.
  const insert = prepared(
    9,
    (
      id: string,
      orgId: string,
      projectId: string,
      type: ResourceType,
      name: string,
      time: string,
      spec: string,
      installation: string | null,
      staged: 'create' | null,
    ) =>
      q.insertInto('resources').values({
        id,
        org_id: orgId,
        project_id: projectId,
        type,
        name,
        creation_time: time,
        update_time: time,
        spec,
        installation,
        staged,
      }),
  );
  const insertNew = (target: InstallationTarget, id: string, spec: Resource['spec'], hidden: boolean) =>
    insert(
      id,
      target.org_id,
      target.project_id,
      spec.type,
      spec.name,
      target.time,
      JSON.stringify(spec),
      hidden ? target.installation : null,
      hidden ? 'create' : null,
    );
  // A slice of the rows an installation marked, by their primary key: those it removes (deleted
  // ones once applied, new ones if undone) go, the others get its change (applied) or lose it
  // (undone).
  const marked = (installation: string, size: number, staged?: 'create' | 'delete') => {
    let slice = q.selectFrom('resources').select('id').where('installation', '=', installation);
    if (staged !== undefined) slice = slice.where('staged', '=', staged);
    return slice.limit(size);
  };
  const unmarked = { installation: null, staged: null, staged_spec: null };
  return {
    async get(projectId: string, id: string): Promise<Resource | undefined> {
      const row = await x.first(visible.selectAll().where('project_id', '=', projectId).where('id', '=', id));
      return row && toResource(row);
    },
    /** The resources of the project among `ids`, each as `get` reads it: one read for several. */
    async getMany(projectId: string, ids: readonly string[]): Promise<Resource[]> {
      if (ids.length === 0) return [];
      const rows = await x.all(
        visible
          .selectAll()
          .where('project_id', '=', projectId)
          .where('id', 'in', [...ids]),
      );
      return rows.map(toResource);
    },
    async getByTypeAndName(
      projectId: string,
      type: ResourceType,
      name: string,
    ): Promise<Resource | undefined> {
      const row = await x.first(
        visible
          .selectAll()
          .where('project_id', '=', projectId)
          .where('type', '=', type)
          .where('name', '=', name),
      );
      return row && toResource(row);
    },
    list(projectId: string, type: ResourceType | undefined, request: PageRequest): Promise<Page<Resource>> {
      let from = visible.where('project_id', '=', projectId);
      if (type !== undefined) from = from.where('type', '=', type);
      return paginate<ResourceRow, Resource>(x, {
        from,
        sorts: { id: 'id', name: 'name' },
        request,
        toElement: toResource,
      });
    },
    /** Up to `size` resources of the project after the id `afterId` (`''` for the first page), by id. */
    installedPage(projectId: string, afterId: string, size: number): Promise<InstalledResource[]> {
      return x.all(
        visible
          .select(['id', 'type', 'name', 'spec'])
          .where('project_id', '=', projectId)
          .where('id', '>', afterId)
          .orderBy('id')
          .limit(size),
      );
    },
    /** Starts an installation into a project: what it writes stays hidden until it is applied. */
    async beginInstallation(target: InstallationTarget): Promise<void> {
      await x.run(
        q
          .insertInto('resource_installations')
          .values({ id: target.installation, project_id: target.project_id, time: target.time }),
      );
    },
    /** Installations of the project begun and not finished (a crash or a failure cut them short). */
    async unfinishedInstallations(projectId: string): Promise<string[]> {
      const rows = await x.all(
        q.selectFrom('resource_installations').select('id').where('project_id', '=', projectId).orderBy('id'),
      );
      return rows.map((row) => row.id);
    },
    /** Writes changes of an installation hidden from readers (never of triggers: see visibleResources). */
    async writeHidden(target: InstallationTarget, changes: readonly StagedChange[]): Promise<void> {
      for (const staged of changes) {
        if (staged.change === 'create') await x.run(insertNew(target, staged.id, staged.spec, true));
        else {
          const spec = staged.change === 'update' ? JSON.stringify(staged.spec) : null;
          await x.run(mark(target.project_id, staged.id, target.installation, staged.change, spec));
        }
      }
    },
    /**
     * Writes changes at once, visible to every reader when their transaction commits; to be
     * called in the transaction that applies the installation.
     */
    async writeVisible(target: InstallationTarget, changes: readonly StagedChange[]): Promise<void> {
      for (const staged of changes) {
        if (staged.change === 'delete')
          await x.run(
            q.deleteFrom('resources').where('project_id', '=', target.project_id).where('id', '=', staged.id),
          );
        else if (staged.change === 'update')
          await x.run(
            q
              .updateTable('resources')
              .set({ spec: JSON.stringify(staged.spec), update_time: target.time })
              .where('project_id', '=', target.project_id)
              .where('id', '=', staged.id),
          );
        else await x.run(insertNew(target, staged.id, staged.spec, false));
      }
    },
    /** Readers see what the installation wrote hidden, all at once. */
    async applyInstallation(installation: string): Promise<void> {
      await x.run(
        q
          .updateTable('resource_installations')
          .set({ applied: sql.lit(1) })
          .where('id', '=', installation),
      );
    },
    /**
     * Folds up to `size` marks of an installation into their rows, as it was applied or, if
     * it was not, as if it never was; forgets the installation once none is left. Returns
     * whether it is finished.
     */
    async finishInstallation(installation: string, size: number): Promise<boolean> {
      const found = await x.first(
        q.selectFrom('resource_installations').select(['applied', 'time']).where('id', '=', installation),
      );
      if (!found) return true;
      const applied = found.applied === 1;
      const gone = marked(installation, size, applied ? 'delete' : 'create');
      const { changes: dropped } = await x.run(q.deleteFrom('resources').where('id', 'in', gone));
      const rest = size - dropped;
      let folded = 0;
      if (rest > 0) {
        const changed = q.updateTable('resources').where('id', 'in', marked(installation, rest));
        ({ changes: folded } = await x.run(
          applied
            ? changed.set((eb) => ({
                spec: eb.fn.coalesce('staged_spec', 'spec'),
                update_time: eb
                  .case('staged')
                  .when(sql.lit('update'))
                  .then(found.time)
                  .else(eb.ref('update_time'))
                  .end(),
                ...unmarked,
              }))
            : changed.set(unmarked),
        ));
      }
      if (dropped + folded < size)
        await x.run(q.deleteFrom('resource_installations').where('id', '=', installation));
      return dropped + folded < size;
    },
  };
}
