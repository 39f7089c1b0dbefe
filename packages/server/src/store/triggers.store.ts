import { sql } from 'kysely';
import type { Executor, QueryBuilder } from './sql.js';

export interface TriggerRef {
  project_id: string;
  id: string;
}

/** Finds enabled triggers by what they listen to (their full specs are read by id). */
export function createTriggerStore(q: QueryBuilder, x: Executor) {
  return {
    /** Enabled triggers of the organization (of one project when given) for this event. */
    listening(
      orgId: string,
      connector: string,
      event: string,
      projectId: string | undefined,
    ): Promise<TriggerRef[]> {
      // The type and the paths are literals, not parameters: SQLite uses the partial index on
      // expressions resources_triggers (migration 003) only for the very same expressions.
      const query = q
        .selectFrom('resources')
        .select(['project_id', 'id'])
        .where('type', '=', sql.lit('trigger'))
        .where('org_id', '=', orgId)
        .where('disabled', '=', sql.lit(0))
        // SQLite: json_extract, the expressions the index is on.
        .where(sql`json_extract(spec, '$.data.connector')`, '=', connector)
        .where(sql`json_extract(spec, '$.data.event')`, '=', event)
        // One statement with or without a project, which keeps the search on resources_triggers
        // (on `project_id = ?` alone SQLite prefers resources_by_project_type_id).
        .where((eb) =>
          eb.or([eb(eb.val(projectId ?? null), 'is', null), eb('project_id', '=', projectId ?? null)]),
        )
        .orderBy('project_id')
        .orderBy('id');
      return x.all(query);
    },
  };
}
