import { sql } from 'kysely';
import type { Dialect } from './dialect.js';
import type { Executor } from './sql.js';

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

/** The statuses of a finished pipeline, as literals: the partial indexes of migration 009 name them so. */
const FINISHED = ['successful', 'failed', 'aborted'].map((status) => sql.lit(status));

/**
 * Deletes what retention says has expired, a batch at a time: each method runs in the caller's
 * transaction and touches at most `limit` pipelines or events (and what they own). The WHERE
 * terms repeat those of the partial indexes of migration 009, which the planner matches.
 * Nothing a pipeline that is not finished needs is ever deleted: only finished pipelines go,
 * and an event (with its command execution) only once no pipeline it made is left.
 */
export function createRetentionStore(d: Dialect, x: Executor) {
  const { q } = d;
  const retention = d.jsonText('spec', 'data', 'retention');
  const pipelines = q.selectFrom('pipelines');
  /**
   * Finished pipelines whose retention of their own has passed at `now`: the day their end and
   * their retention make, the expression of the index pipelines_expiring, written as the index
   * is, compared with the day of `now` (both through the dialect's dayNumber).
   */
  const expired = (now: string) =>
    pipelines
      .where('status', 'in', FINISHED)
      .where(retention, 'is not', null)
      .where((eb) =>
        eb(
          eb(d.dayNumber(eb.ref('end_time')), '+', d.jsonNumber('spec', 'data', 'retention')),
          '<=',
          d.dayNumber(eb.val(now)),
        ),
      );
  /** Finished pipelines without a retention of their own that ended up to `cutoff`. */
  const endedBefore = (cutoff: string) =>
    pipelines.where('status', 'in', FINISHED).where(retention, 'is', null).where('end_time', '<=', cutoff);

  // Deleting a pipeline deletes its tasks, their step executions, output and keys, and its
  // scratchpad (ON DELETE CASCADE, foreign keys being on).
  const deletePipelines = (which: typeof pipelines, limit: number) =>
    x.all(q.deleteFrom('pipelines').where('id', 'in', which.select('id').limit(limit)).returning('event_id'));
  /** Where a walk is: after the row (time, id). */
  const progressOf = (name: ProgressName) =>
    x.first(q.selectFrom('retention_progress').select(['time', 'id']).where('name', '=', name));
  const saveProgress = (name: ProgressName, at: { time: string; id: string }) =>
    x.run(
      q
        .insertInto('retention_progress')
        .values({ name, time: at.time, id: at.id })
        .onConflict((oc) =>
          oc
            .column('name')
            .doUpdateSet((eb) => ({ time: eb.ref('excluded.time'), id: eb.ref('excluded.id') })),
        ),
    );
  const forgetProgress = (name: ProgressName) =>
    x.run(q.deleteFrom('retention_progress').where('name', '=', name));
  /** The next finished pipelines without a retention of their own that ended up to the cutoff, in the order they ended. */
  const pipelinesWithOutput = (cutoff: string, after: { time: string; id: string }, limit: number) =>
    x.all(
      endedBefore(cutoff)
        .select(['id', 'end_time'])
        .where((eb) => eb(eb.refTuple('end_time', 'id'), '>', eb.tuple(after.time, after.id)))
        .orderBy('end_time')
        .orderBy('id')
        .limit(limit)
        .$narrowType<{ end_time: string }>(),
    );
  /** The next events stored up to the cutoff, in the order they were stored. */
  const eventsStoredBefore = (cutoff: string, after: { time: string; id: string }, limit: number) =>
    x.all(
      q
        .selectFrom('events')
        .select(['id', 'creation_time'])
        .where('creation_time', '<=', cutoff)
        .where((eb) => eb(eb.refTuple('creation_time', 'id'), '>', eb.tuple(after.time, after.id)))
        .orderBy('creation_time')
        .orderBy('id')
        .limit(limit),
    );
  /** The tasks of the pipelines `ids`. */
  const tasksOf = (ids: readonly string[]) =>
    q
      .selectFrom('tasks')
      .select('id')
      .where(d.oneOf(sql.ref('pipeline_id'), ids));

  /** Deletes the events among `ids` stored up to `cutoff` that no pipeline refers to, with their command executions. */
  const deleteFreeEvents = async (ids: readonly string[], cutoff: string) => {
    if (ids.length === 0) return NOTHING;
    // Among the given events, those stored before the cutoff that no pipeline refers to.
    const freed = (
      await x.all(
        q
          .deleteFrom('events')
          .where(d.oneOf(sql.ref('id'), [...new Set(ids)]))
          .where('creation_time', '<=', cutoff)
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('pipelines')
                  .select(sql.lit(1).as('one'))
                  .whereRef('event_id', '=', 'events.id'),
              ),
            ),
          )
          .returning('id'),
      )
    ).map((row) => row.id);
    if (freed.length === 0) return NOTHING;
    const { changes: commandExecutions } = await x.run(
      q.deleteFrom('command_executions').where(d.oneOf(sql.ref('event_id'), freed)),
    );
    return { ...NOTHING, events: freed.length, commandExecutions };
  };

  /**
   * Where a walk resumes: after what it last handled, but never past the cutoff, so that rows it
   * passed when the retention was shorter are looked at again once they are old enough.
   */
  const resumeAt = async (name: ProgressName, cutoff: string) => {
    const saved = (await progressOf(name)) ?? { time: '', id: '' };
    if (saved.time < cutoff) return saved;
    const clamped = { time: cutoff, id: '' };
    if (saved.time !== clamped.time || saved.id !== clamped.id) await saveProgress(name, clamped);
    return clamped;
  };

  /** Deleted pipelines leave their events behind, deleted with them when old enough and free. */
  const afterPipelines = async (
    deleted: { event_id: string }[],
    eventCutoff: string | undefined,
  ): Promise<BatchResult> => {
    const events =
      eventCutoff === undefined
        ? NOTHING
        : await deleteFreeEvents(
            deleted.map((row) => row.event_id),
            eventCutoff,
          );
    return { ...events, scanned: deleted.length, pipelines: deleted.length };
  };

  /** Whether there is any such pipeline. */
  const anyOf = async (which: typeof pipelines) =>
    (await x.first(which.select(sql.lit(1).as('one')).limit(1))) !== undefined;

  return {
    /**
     * Whether a purge at `cutoffs` would find anything (a few lookups through indexes). Readies
     * the walks first: one turned off forgets where it was, as when turned on again it must
     * look at what it passed (events freed meanwhile); one past its cutoff is held back to it.
     */
    async anyExpired(cutoffs: Cutoffs): Promise<boolean> {
      const walksFind: boolean[] = [];
      for (const [name, cutoff, next] of [
        ['step_output', cutoffs.stepOutput, pipelinesWithOutput],
        ['events', cutoffs.events, eventsStoredBefore],
      ] as const) {
        if (cutoff === undefined) {
          await forgetProgress(name);
          walksFind.push(false);
        } else walksFind.push((await next(cutoff, await resumeAt(name, cutoff), 1)).length > 0);
      }
      return (
        walksFind.includes(true) ||
        (await anyOf(expired(cutoffs.now))) ||
        (cutoffs.pipelines !== undefined && (await anyOf(endedBefore(cutoffs.pipelines))))
      );
    },

    /**
     * Deletes finished pipelines whose retention of their own has passed; their events go too
     * when past the event cutoff and no other pipeline refers to them.
     */
    async deleteExpiredPipelines(cutoffs: Cutoffs, limit: number): Promise<BatchResult> {
      return afterPipelines(await deletePipelines(expired(cutoffs.now), limit), cutoffs.events);
    },

    /** Finished pipelines without a retention of their own past the server's, and so on. */
    async deletePipelinesEndedBefore(cutoffs: Cutoffs, limit: number): Promise<BatchResult> {
      if (cutoffs.pipelines === undefined) return { ...NOTHING, scanned: 0 };
      return afterPipelines(await deletePipelines(endedBefore(cutoffs.pipelines), limit), cutoffs.events);
    },

    /**
     * Empties the step output of the next finished pipelines without a retention of their own
     * that ended before the cutoff, in the order they ended. A pipeline restarted afterwards ends
     * again later, past where the walk is, and is walked again.
     */
    async deleteStepOutput(cutoffs: Cutoffs, limit: number): Promise<BatchResult> {
      const cutoff = cutoffs.stepOutput;
      if (cutoff === undefined) return { ...NOTHING, scanned: 0 };
      const after = await resumeAt('step_output', cutoff);
      const rows = await pipelinesWithOutput(cutoff, after, limit);
      const last = rows.at(-1);
      if (last) {
        const ids = rows.map((row) => row.id);
        // Steps whose output goes, of every run of their tasks, are marked cut: an empty output
        // then reads as one removed.
        await x.run(
          q
            .updateTable('step_executions')
            .set({ output_truncated: sql.lit(1) })
            .where('task_id', 'in', tasksOf(ids))
            .where('output_truncated', '=', sql.lit(0))
            .where((eb) =>
              eb.exists(
                eb
                  .selectFrom('step_output_chunks as c')
                  .select(sql.lit(1).as('one'))
                  .whereRef('c.task_id', '=', 'step_executions.task_id')
                  .whereRef('c.run', '=', 'step_executions.run')
                  .whereRef('c.attempt', '=', 'step_executions.attempt')
                  .whereRef('c.step_index', '=', 'step_executions.step_index'),
              ),
            ),
        );
        await x.run(q.deleteFrom('step_output_chunks').where('task_id', 'in', tasksOf(ids)));
        await saveProgress('step_output', { time: last.end_time, id: last.id });
      }
      return { ...NOTHING, scanned: rows.length, stepOutputs: rows.length };
    },

    /**
     * Deletes the next events stored before the cutoff, in the order they were stored, that no
     * pipeline refers to, with their command executions. Those still referred to are passed:
     * they go with the last of their pipelines (see deleteExpiredPipelines).
     */
    async deleteEvents(cutoffs: Cutoffs, limit: number): Promise<BatchResult> {
      const cutoff = cutoffs.events;
      if (cutoff === undefined) return { ...NOTHING, scanned: 0 };
      const after = await resumeAt('events', cutoff);
      const rows = await eventsStoredBefore(cutoff, after, limit);
      const last = rows.at(-1);
      if (!last) return { ...NOTHING, scanned: 0 };
      const deleted = await deleteFreeEvents(
        rows.map((row) => row.id),
        cutoff,
      );
      await saveProgress('events', { time: last.creation_time, id: last.id });
      return { ...deleted, scanned: rows.length };
    },
  };
}
