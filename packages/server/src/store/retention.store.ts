import type { Db } from './db.js';

/** What one batch of a purge looked at (`scanned`: below its limit, it was the last) and deleted. */
export interface BatchResult {
  scanned: number;
  pipelines: number;
  /** Pipelines whose step output was emptied. */
  stepOutputs: number;
  events: number;
  commandExecutions: number;
}

const NOTHING = { pipelines: 0, stepOutputs: 0, events: 0, commandExecutions: 0 };

/** The purges that walk a table in order, keeping where they are in `retention_progress`. */
type ProgressName = 'step_output' | 'events';

/** Up to when things have expired; undefined: kept forever. */
export interface Cutoffs {
  /** Now: a pipeline with a retention of its own expires that many days after its end. */
  now: string;
  /** Finished pipelines without one that ended up to then. */
  pipelines?: string | undefined;
  /** The step output of those that ended up to then. */
  stepOutput?: string | undefined;
  /** Events stored up to then, once no pipeline refers to them. */
  events?: string | undefined;
}

const FINISHED = `status IN ('successful', 'failed', 'aborted')`;
const RETENTION = `json_extract(spec, '$.data.retention')`;
/** Finished pipelines whose retention of their own has passed at `@now` (a Julian day). */
const EXPIRED = `${FINISHED} AND ${RETENTION} IS NOT NULL AND julianday(end_time) + ${RETENTION} <= @now`;
/** Finished pipelines without a retention of their own that ended up to `@cutoff`. */
const ENDED_BEFORE = `${FINISHED} AND ${RETENTION} IS NULL AND end_time <= @cutoff`;
const MS_PER_DAY = 86_400_000;
/** The Julian day number of the Unix epoch: julianday() of a time is this plus its days since then. */
const UNIX_EPOCH_JULIAN_DAY = 2_440_587.5;

const julianDay = (time: string) => Date.parse(time) / MS_PER_DAY + UNIX_EPOCH_JULIAN_DAY;

/**
 * Deletes what retention says has expired, a batch at a time: each method runs in the caller's
 * transaction and touches at most `limit` pipelines or events (and what they own). The WHERE
 * terms repeat those of the partial indexes of migration 009, which the planner matches.
 * Nothing a pipeline that is not finished needs is ever deleted: only finished pipelines go,
 * and an event (with its command execution) only once no pipeline it made is left.
 */
export function createRetentionStore(db: Db) {
  // Deleting a pipeline deletes its tasks, their step executions, output and keys, and its
  // scratchpad (ON DELETE CASCADE, foreign keys being on).
  const expiredPipelines = db.prepare<{ now: number; limit: number }, { event_id: string }>(
    `DELETE FROM pipelines WHERE id IN (
       SELECT id FROM pipelines WHERE ${EXPIRED} LIMIT @limit)
     RETURNING event_id`,
  );
  const pipelinesEndedBefore = db.prepare<{ cutoff: string; limit: number }, { event_id: string }>(
    `DELETE FROM pipelines WHERE id IN (
       SELECT id FROM pipelines WHERE ${ENDED_BEFORE} LIMIT @limit)
     RETURNING event_id`,
  );
  // Among the given events, those stored before the cutoff that no pipeline refers to.
  const freeEvents = db.prepare<{ ids: string; cutoff: string }, { id: string }>(
    `DELETE FROM events
     WHERE id IN (SELECT value FROM json_each(@ids)) AND creation_time <= @cutoff
       AND NOT EXISTS (SELECT 1 FROM pipelines WHERE event_id = events.id)
     RETURNING id`,
  );
  const commandExecutionsOf = db.prepare<{ ids: string }>(
    `DELETE FROM command_executions WHERE event_id IN (SELECT value FROM json_each(@ids))`,
  );
  const progressOf = db.prepare<[ProgressName], { time: string; id: string }>(
    'SELECT time, id FROM retention_progress WHERE name = ?',
  );
  const saveProgress = db.prepare<{ name: ProgressName; time: string; id: string }>(
    `INSERT INTO retention_progress (name, time, id) VALUES (@name, @time, @id)
     ON CONFLICT (name) DO UPDATE SET time = excluded.time, id = excluded.id`,
  );
  const forgetProgress = db.prepare<[ProgressName]>('DELETE FROM retention_progress WHERE name = ?');
  const pipelinesWithOutput = db.prepare<
    { cutoff: string; time: string; id: string; limit: number },
    { id: string; end_time: string }
  >(
    `SELECT id, end_time FROM pipelines
     WHERE ${ENDED_BEFORE} AND (end_time, id) > (@time, @id)
     ORDER BY end_time, id
     LIMIT @limit`,
  );
  const TASKS_OF = `SELECT id FROM tasks WHERE pipeline_id IN (SELECT value FROM json_each(@ids))`;
  // Steps whose output goes, of every run of their tasks, are marked cut: an empty output then
  // reads as one removed.
  const markOutputCut = db.prepare<{ ids: string }>(
    `UPDATE step_executions SET output_truncated = 1
     WHERE task_id IN (${TASKS_OF}) AND output_truncated = 0
       AND EXISTS (SELECT 1 FROM step_output_chunks c
                   WHERE c.task_id = step_executions.task_id AND c.run = step_executions.run
                     AND c.attempt = step_executions.attempt AND c.step_index = step_executions.step_index)`,
  );
  const deleteOutput = db.prepare<{ ids: string }>(
    `DELETE FROM step_output_chunks WHERE task_id IN (${TASKS_OF})`,
  );
  const eventsStoredBefore = db.prepare<
    { cutoff: string; time: string; id: string; limit: number },
    { id: string; creation_time: string }
  >(
    `SELECT id, creation_time FROM events
     WHERE creation_time <= @cutoff AND (creation_time, id) > (@time, @id)
     ORDER BY creation_time, id
     LIMIT @limit`,
  );

  const anyExpiredPipeline = db
    .prepare<{ now: number }>(`SELECT 1 FROM pipelines WHERE ${EXPIRED} LIMIT 1`)
    .pluck();
  const anyEndedBefore = db
    .prepare<{ cutoff: string }>(`SELECT 1 FROM pipelines WHERE ${ENDED_BEFORE} LIMIT 1`)
    .pluck();

  /** Deletes the events among `ids` stored up to `cutoff` that no pipeline refers to, with their command executions. */
  const deleteFreeEvents = (ids: readonly string[], cutoff: string) => {
    if (ids.length === 0) return NOTHING;
    const freed = freeEvents.all({ ids: JSON.stringify([...new Set(ids)]), cutoff }).map((row) => row.id);
    if (freed.length === 0) return NOTHING;
    const commandExecutions = commandExecutionsOf.run({ ids: JSON.stringify(freed) }).changes;
    return { ...NOTHING, events: freed.length, commandExecutions };
  };

  /**
   * Where a walk resumes: after what it last handled, but never past the cutoff, so that rows it
   * passed when the retention was shorter are looked at again once they are old enough.
   */
  const resumeAt = (name: ProgressName, cutoff: string) => {
    const saved = progressOf.get(name) ?? { time: '', id: '' };
    if (saved.time < cutoff) return saved;
    const clamped = { time: cutoff, id: '' };
    if (saved.time !== clamped.time || saved.id !== clamped.id) saveProgress.run({ name, ...clamped });
    return clamped;
  };

  /** Deleted pipelines leave their events behind, deleted with them when old enough and free. */
  const afterPipelines = (deleted: { event_id: string }[], eventCutoff: string | undefined): BatchResult => {
    const events =
      eventCutoff === undefined
        ? NOTHING
        : deleteFreeEvents(
            deleted.map((row) => row.event_id),
            eventCutoff,
          );
    return { ...events, scanned: deleted.length, pipelines: deleted.length };
  };

  return {
    /**
     * Whether a purge at `cutoffs` would find anything (a few lookups through indexes). Readies
     * the walks first: one turned off forgets where it was, as when turned on again it must
     * look at what it passed (events freed meanwhile); one past its cutoff is held back to it.
     */
    anyExpired(cutoffs: Cutoffs): boolean {
      const walksFind = [
        ['step_output', cutoffs.stepOutput, pipelinesWithOutput] as const,
        ['events', cutoffs.events, eventsStoredBefore] as const,
      ].map(([name, cutoff, next]) => {
        if (cutoff === undefined) {
          forgetProgress.run(name);
          return false;
        }
        return next.get({ cutoff, ...resumeAt(name, cutoff), limit: 1 }) !== undefined;
      });
      return (
        walksFind.includes(true) ||
        anyExpiredPipeline.get({ now: julianDay(cutoffs.now) }) !== undefined ||
        (cutoffs.pipelines !== undefined && anyEndedBefore.get({ cutoff: cutoffs.pipelines }) !== undefined)
      );
    },

    /**
     * Deletes finished pipelines whose retention of their own has passed; their events go too
     * when past the event cutoff and no other pipeline refers to them.
     */
    deleteExpiredPipelines(cutoffs: Cutoffs, limit: number): BatchResult {
      return afterPipelines(expiredPipelines.all({ now: julianDay(cutoffs.now), limit }), cutoffs.events);
    },

    /** Finished pipelines without a retention of their own past the server's, and so on. */
    deletePipelinesEndedBefore(cutoffs: Cutoffs, limit: number): BatchResult {
      if (cutoffs.pipelines === undefined) return { ...NOTHING, scanned: 0 };
      return afterPipelines(pipelinesEndedBefore.all({ cutoff: cutoffs.pipelines, limit }), cutoffs.events);
    },

    /**
     * Empties the step output of the next finished pipelines without a retention of their own
     * that ended before the cutoff, in the order they ended. A pipeline restarted afterwards ends
     * again later, past where the walk is, and is walked again.
     */
    deleteStepOutput(cutoffs: Cutoffs, limit: number): BatchResult {
      const cutoff = cutoffs.stepOutput;
      if (cutoff === undefined) return { ...NOTHING, scanned: 0 };
      const after = resumeAt('step_output', cutoff);
      const rows = pipelinesWithOutput.all({ cutoff, ...after, limit });
      const last = rows.at(-1);
      if (last) {
        const ids = JSON.stringify(rows.map((row) => row.id));
        markOutputCut.run({ ids });
        deleteOutput.run({ ids });
        saveProgress.run({ name: 'step_output', time: last.end_time, id: last.id });
      }
      return { ...NOTHING, scanned: rows.length, stepOutputs: rows.length };
    },

    /**
     * Deletes the next events stored before the cutoff, in the order they were stored, that no
     * pipeline refers to, with their command executions. Those still referred to are passed:
     * they go with the last of their pipelines (see deleteExpiredPipelines).
     */
    deleteEvents(cutoffs: Cutoffs, limit: number): BatchResult {
      const cutoff = cutoffs.events;
      if (cutoff === undefined) return { ...NOTHING, scanned: 0 };
      const after = resumeAt('events', cutoff);
      const rows = eventsStoredBefore.all({ cutoff, ...after, limit });
      const last = rows.at(-1);
      if (!last) return { ...NOTHING, scanned: 0 };
      const deleted = deleteFreeEvents(
        rows.map((row) => row.id),
        cutoff,
      );
      saveProgress.run({ name: 'events', time: last.creation_time, id: last.id });
      return { ...deleted, scanned: rows.length };
    },
  };
}
