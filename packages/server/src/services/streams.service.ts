import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Schemas } from '@pipewright/types';
import { DomainError } from '../domain/errors.js';
import { isFinished } from '../domain/execution/statuses.js';
import { BEFORE_FIRST_CHUNK, type Change, type OutputChunk, type Store } from '../store/index.js';
import type { ChangeFeed } from './streams/change-feed.js';
import {
  type ChangedObject,
  type ChangeFilters,
  changedObjects,
  matches,
} from './streams/project-changes.js';
import type {
  EndReason,
  OpenStream,
  StreamMessage,
  StreamRequest,
  StreamSink,
} from './streams/stream-types.js';
import {
  chunkFrom,
  type OutputPosition,
  type OutputReads,
  outputData,
  sharedReads,
  storeReads,
  taskState,
} from './streams/task-output.js';
import { turnIsOver } from './streams/turns.js';

/** Changes read at once by a stream that catches up after a reconnect. */
const CATCH_UP_CHANGES = 1000;
/** Chunks of output (16 KiB at most each) read at once. */
const OUTPUT_CHUNKS = 64;

/** A stream as the service keeps it while it is open. */
interface Member {
  request: StreamRequest;
  end(reason: EndReason): void;
  /** Ends it without a word: something failed, the consumer reconnects and resumes. */
  abandon(): void;
}
interface ProjectMember extends Member {
  /** It filters on the name of a pipeline: the objects it is delivered need it. */
  namesPipelines: boolean;
  deliver(objects: readonly ChangedObject[], lastSeq: number): void;
}
interface OutputMember extends Member {
  /** Sends what changed of its task, read with `reads`, which the task's other streams may share. */
  wake(reads: OutputReads): void;
}

const message = (event: StreamMessage['event'], id: number, data: unknown): StreamMessage => ({
  event,
  id: String(id),
  data: JSON.stringify(data),
});

/**
 * Output messages, made once for all the streams that send the same chunk from the same byte: the
 * chunks of a read that the streams of a task share.
 */
const outputMessages = new WeakMap<OutputChunk, { start: number; made: StreamMessage }>();
/** The `output` message of `chunk` from byte `start` of the task's output to byte `end`. */
function outputMessage(taskId: string, chunk: OutputChunk, start: number, end: number, text: string) {
  const known = outputMessages.get(chunk);
  if (known?.start === start) return known.made;
  const made = message('output', end, outputData(taskId, chunk, start, text));
  outputMessages.set(chunk, { start, made });
  return made;
}

/** The value under `key`, made on first use. */
function entry<V>(map: Map<string, V>, key: string, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** A Last-Event-ID or offset that is a number of ours: a non-negative safe integer. */
function position(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * The live streams of the API: a project's changes, a task's output. Every stream reads the
 * change feed through one subscription, held while any stream is open; the objects a batch of
 * changes concerns are read and serialized once per project, whatever the number of its streams.
 * Streams end when their key stops being valid, their project is deleted, or (output) their task
 * has ended; the HTTP layer ends them when the server stops or their consumer falls behind.
 */
export function createStreamService(store: Store, feed: ChangeFeed) {
  const members = new Set<Member>();
  const byProject = new Map<string, Set<ProjectMember>>();
  const byTask = new Map<string, Set<OutputMember>>();
  let unsubscribe: (() => void) | undefined;

  /** Adds a stream, which knew of the changes up to `after` before it read anything itself. */
  const join = <M extends Member>(index: Map<string, Set<M>>, key: string, member: M, after: number) => {
    members.add(member);
    entry(index, key, () => new Set<M>()).add(member);
    unsubscribe ??= feed.subscribe(dispatch, failed, after);
  };
  const leave = <M extends Member>(index: Map<string, Set<M>>, key: string, member: M) => {
    members.delete(member);
    const set = index.get(key);
    set?.delete(member);
    if (set?.size === 0) index.delete(key);
    if (members.size === 0) {
      unsubscribe?.();
      unsubscribe = undefined;
    }
  };
  /** Runs `step` for a stream; a failure (storage, say) ends that stream alone. */
  const guarded = (member: Member, step: () => void) => {
    try {
      step();
    } catch {
      member.abandon();
    }
  };

  /** The feed failed: every stream ends without a word, and its consumer reconnects. */
  function failed(): void {
    unsubscribe = undefined;
    for (const member of [...members]) member.abandon();
  }

  async function dispatch(changes: readonly Change[]): Promise<void> {
    const lastSeq = (changes.at(-1) as Change).seq;
    const changesOf = new Map<string, Change[]>();
    const accessOrgs = new Set<string>();
    const deletedProjects = new Set<string>();
    const taskProjects = new Set<string>();
    const outputTasks = new Set<string>();
    for (const change of changes) {
      if (change.kind === 'access') accessOrgs.add(change.id);
      else if (change.kind === 'project') deletedProjects.add(change.id);
      if (change.project_id === null) continue;
      if (change.kind === 'task') taskProjects.add(change.project_id);
      if (change.kind === 'task' || change.kind === 'output') outputTasks.add(change.id);
      entry(changesOf, change.project_id, () => []).push(change);
    }
    // Access first: nothing more reaches a stream whose key was revoked or whose project went.
    if (accessOrgs.size + deletedProjects.size + taskProjects.size > 0)
      await endRefused(accessOrgs, deletedProjects, taskProjects);
    await deliver(changesOf, lastSeq, outputTasks);
  }

  /**
   * Ends the streams whose project was deleted, and those whose key is no longer valid where it may
   * have changed: in an organization whose access changed, or a task's key once its task changed.
   */
  async function endRefused(
    accessOrgs: Set<string>,
    deletedProjects: Set<string>,
    taskProjects: Set<string>,
  ): Promise<void> {
    let checked = 0;
    for (const member of [...members]) {
      const { principal, project, stillAuthorized } = member.request;
      if (deletedProjects.has(project.id)) member.end('project_deleted');
      else if (accessOrgs.has(principal.orgId) || (principal.projectId && taskProjects.has(project.id))) {
        if (turnIsOver(checked)) await nextTurn();
        checked += 1;
        if (!(await stillAuthorized())) member.end('access_revoked');
      }
    }
  }

  async function deliver(
    changesOf: Map<string, Change[]>,
    lastSeq: number,
    outputTasks: Set<string>,
  ): Promise<void> {
    let written = 0;
    for (const [projectId, streams] of byProject) {
      const projectChanges = changesOf.get(projectId);
      let objects: ChangedObject[] = [];
      try {
        if (projectChanges) {
          const withNames = [...streams].some((member) => member.namesPipelines);
          objects = await changedObjects(store, projectId, projectChanges, withNames);
        }
      } catch {
        for (const member of [...streams]) member.abandon();
        continue;
      }
      for (const member of [...streams]) {
        if (turnIsOver(written)) await nextTurn();
        written += 1;
        guarded(member, () => member.deliver(objects, lastSeq));
      }
    }
    for (const taskId of outputTasks) {
      const streams = [...(byTask.get(taskId) ?? [])];
      const first = streams[0];
      if (!first) continue;
      // Most of a task's streams stand at the end of its output: what they read, they read once.
      const reads = sharedReads(storeReads(store, first.request.project.id, taskId));
      for (const member of streams) {
        if (turnIsOver(written)) await nextTurn();
        written += 1;
        guarded(member, () => member.wake(reads));
      }
    }
  }

  /**
   * How a stream ends, once whichever way comes first: with an `end` message (its id `last()`),
   * abandoned, or closed by its consumer.
   */
  const ending = (sink: StreamSink, last: () => number, leaveIndex: () => void) => {
    let open = true;
    const close = () => {
      if (!open) return false;
      open = false;
      leaveIndex();
      return true;
    };
    return {
      isOpen: () => open,
      end(reason: EndReason) {
        if (!close()) return;
        sink.send(message('end', last(), { reason }));
        sink.close();
      },
      abandon() {
        if (close()) sink.close();
      },
      close,
    };
  };

  return {
    /**
     * Opens the stream of a project's changes, from now, or from after `lastEventId` while the
     * change log still holds what followed it (else `start` says `reset`, and it goes on from now).
     */
    async projectChanges(
      request: StreamRequest,
      filters: ChangeFilters,
      sink: StreamSink,
    ): Promise<OpenStream> {
      const { project } = request;
      const latest = await feed.latest();
      const oldest = await feed.oldest();
      const resumeAt = position(request.lastEventId);
      const resumable =
        resumeAt !== undefined &&
        resumeAt <= latest &&
        (oldest === undefined ? resumeAt === latest : resumeAt >= oldest - 1);
      let at = resumable ? resumeAt : latest;
      let live = false;
      // Changes past `at` were delivered while the stream caught up: it reads the log again.
      let missed = false;
      const namesPipelines = filters.pipeline_name !== undefined;

      const send = (objects: readonly ChangedObject[], lastSeq: number) => {
        const shown = objects.filter((object) => object.seq > at && matches(object, filters));
        if (shown.length > 0 && !sink.sendAll(shown.map((object) => object.message))) return;
        at = Math.max(at, lastSeq);
      };
      const member: ProjectMember = {
        request,
        namesPipelines,
        deliver: (objects, lastSeq) => {
          if (live) send(objects, lastSeq);
          else if (lastSeq > at) missed = true;
        },
        end: (reason) => state.end(reason),
        abandon: () => state.abandon(),
      };
      const state = ending(
        sink,
        () => at,
        () => leave(byProject, project.id, member),
      );
      join(byProject, project.id, member, latest);
      sink.send(message('start', at, { reset: request.lastEventId !== undefined && !resumable }));

      // Live once a read of the log reaches its end with nothing delivered meanwhile: the feed
      // delivers whatever is committed after that read.
      const catchUp = async () => {
        for (;;) {
          missed = false;
          const changes = await feed.read(at, CATCH_UP_CHANGES);
          const last = changes.at(-1);
          if (last) send(await changedObjects(store, project.id, changes, namesPipelines), last.seq);
          const full = changes.length === CATCH_UP_CHANGES;
          if (!full && !missed) break;
          if (full) await sink.drained();
          if (!state.isOpen()) return;
        }
        live = true;
      };
      catchUp().catch(() => state.abandon());
      return { position: () => String(at), end: member.end, close: () => void state.close() };
    },

    /**
     * Opens the stream of a task's output, every run and attempt, from byte `offset` (or after
     * `lastEventId`), with the task itself whenever its status, run or attempt changes; it ends
     * once the task has ended and its last step has stopped.
     */
    async taskOutput(
      request: StreamRequest,
      taskId: string,
      offset: number | undefined,
      sink: StreamSink,
    ): Promise<OpenStream> {
      const { project } = request;
      const latest = await feed.latest();
      const task = await store.tasks.get(project.id, taskId);
      if (!task) throw new DomainError('unknown_task', `no task ${taskId}`, { id: taskId });
      const asked = request.lastEventId !== undefined ? position(request.lastEventId) : (offset ?? 0);
      const found = asked === undefined ? undefined : await store.stepOutput.locate(taskId, asked);
      const from = found && asked !== undefined ? asked : 0;
      const located = found ?? { after: BEFORE_FIRST_CHUNK, start: 0 };
      let at: OutputPosition = { key: located.after, offset: located.start };
      // Bytes of the next chunk that the consumer has already.
      let skip = from - located.start;
      let shown = '';
      let pumping = false;
      let again = false;

      /** Where the consumer is: what was sent, and the part of the next chunk it has already. */
      const reached = () => at.offset + skip;
      const sendTask = (current: Schemas['Task']) => {
        shown = taskState(current);
        return sink.send(message('task', reached(), current));
      };
      const ownReads = storeReads(store, project.id, taskId);
      /** Sends what was printed since, then the task if it changed, then the end once it has ended. */
      const pump = async (catchingUp: boolean, reads: OutputReads) => {
        // The end is read first: output committed before it is then read below.
        const current = await reads.task();
        const ended = !current || (isFinished(current.status) && !(await reads.anyRunning()));
        for (;;) {
          const chunks = await reads.after(at.key, OUTPUT_CHUNKS);
          const messages: StreamMessage[] = [];
          for (const chunk of chunks) {
            const { text, skipped } = chunkFrom(chunk, skip);
            skip = 0;
            const start = at.offset + skipped;
            at = { key: chunk, offset: at.offset + chunk.bytes };
            if (text !== '') messages.push(outputMessage(taskId, chunk, start, at.offset, text));
          }
          if (messages.length > 0 && !sink.sendAll(messages)) return;
          if (chunks.length < OUTPUT_CHUNKS) break;
          if (catchingUp) await sink.drained();
          if (!state.isOpen()) return;
        }
        if (current && taskState(current) !== shown && !sendTask(current)) return;
        if (ended) member.end('task_ended');
      };
      const wake = (catchingUp = false, reads = ownReads) => {
        if (pumping) {
          again = true;
          return;
        }
        pumping = true;
        pump(catchingUp, reads)
          .catch(() => state.abandon())
          .finally(() => {
            pumping = false;
            if (again && state.isOpen()) {
              again = false;
              wake();
            }
          });
      };
      const member: OutputMember = {
        request,
        wake: (reads) => wake(false, reads),
        end: (reason) => state.end(reason),
        abandon: () => state.abandon(),
      };
      const state = ending(sink, reached, () => leave(byTask, taskId, member));
      join(byTask, taskId, member, latest);
      sink.send(message('start', from, { reset: found === undefined }));
      // The task as it is, then the output it has so far, then what follows.
      sendTask(task);
      wake(true);
      return { position: () => String(reached()), end: member.end, close: () => void state.close() };
    },
  };
}

export type StreamService = ReturnType<typeof createStreamService>;
