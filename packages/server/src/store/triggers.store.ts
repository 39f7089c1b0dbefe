import type { Db } from './db.js';

export interface TriggerRef {
  project_id: string;
  id: string;
}

/** Finds enabled triggers by what they listen to (their full specs are read by id). */
export function createTriggerStore(db: Db) {
  const listening = db.prepare<
    { org_id: string; connector: string; event: string; project_id: string | null },
    TriggerRef
  >(
    `SELECT project_id, id FROM resources
     WHERE type = 'trigger' AND org_id = @org_id AND disabled = 0
       AND json_extract(spec, '$.data.connector') = @connector AND json_extract(spec, '$.data.event') = @event
       AND (@project_id IS NULL OR project_id = @project_id)
     ORDER BY project_id, id`,
  );
  return {
    /** Enabled triggers of the organization (of one project when given) for this event. */
    listening(orgId: string, connector: string, event: string, projectId: string | undefined): TriggerRef[] {
      return listening.all({ org_id: orgId, connector, event, project_id: projectId ?? null });
    },
  };
}
