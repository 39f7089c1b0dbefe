import { sql } from 'kysely';
import type { Dialect } from './dialect.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

export interface TriggerRef {
  project_id: string;
  id: string;
}

/** Finds enabled triggers by what they listen to (their full specs are read by id). */
export function createTriggerStore(d: Dialect, x: Executor) {
  const { q } = d;
  // The type and the paths are literals, not parameters: the database uses the partial index
  // on expressions resources_triggers (migration 003) only for the very same expressions.
  const listening = prepared(4, (orgId: string, connector: string, event: string, projectId: string | null) =>
    q
      .selectFrom('resources')
      .select(['project_id', 'id'])
      .where('type', '=', sql.lit('trigger'))
      .where('org_id', '=', orgId)
      .where('disabled', '=', sql.lit(0))
      .where(d.jsonText('spec', 'data', 'connector'), '=', connector)
      .where(d.jsonText('spec', 'data', 'event'), '=', event)
      // One statement with or without a project, which keeps the search on resources_triggers
      // (on `project_id = ?` alone SQLite prefers resources_by_project_type_id).
      .where((eb) =>
        eb.or([eb(eb.cast(eb.val(projectId), 'text'), 'is', null), eb('project_id', '=', projectId)]),
      )
      .orderBy('project_id')
      .orderBy('id'),
  );
  return {
    /** Enabled triggers of the organization (of one project when given) for this event. */
    listening(
      orgId: string,
      connector: string,
      event: string,
      projectId: string | undefined,
    ): Promise<TriggerRef[]> {
      return x.all(listening(orgId, connector, event, projectId ?? null));
    },
  };
}
