import { type ApiClient, projectChanges, type Schemas, walk } from '@pipewright/client';
import { CliError } from './errors.js';
import type { Terminal } from './session.js';
import { renderStepOutput } from './steps.js';
import { formatDuration } from './table.js';

type Pipeline = Schemas['Pipeline'];
type Task = Schemas['Task'];

export interface PipelineState {
  pipeline: Pipeline;
  tasks: Task[];
}

const FINAL = new Set<string>(['successful', 'failed', 'aborted']);
export const isFinal = (status: string) => FINAL.has(status);

/** A task instance as people name it: `test#2` when its entry has several instances. */
export const taskLabel = (task: Task) =>
  (task.pipeline_task.nb_instances ?? 1) > 1 ? `${task.name}#${task.instance_id}` : task.name;

/** Which run (once a restart ran the task again) and retry of the task the status is of. */
const attemptNote = (task: Task) => {
  const notes = [
    ...(task.run > 1 ? [`run ${task.run}`] : []),
    ...(task.retry > 0 ? [`retry ${task.retry}`] : []),
  ];
  return notes.length > 0 ? ` (${notes.join(', ')})` : '';
};

async function readState(client: ApiClient, id: string): Promise<PipelineState> {
  const { data: pipeline } = await client.GET('/pipelines/id/{id}', { params: { path: { id } } });
  if (!pipeline) throw new Error(`no answer for pipeline ${id}`);
  const tasks: Task[] = [];
  for await (const task of walk(client, '/tasks', { pipeline_id: id, size: 100, sort: 'creation_time' })) {
    tasks.push(task);
  }
  return { pipeline, tasks: inPipelineOrder(tasks) };
}

/** Tasks in the order they can run: after their dependencies, then by name and instance. */
export function inPipelineOrder(tasks: Task[]): Task[] {
  const byName = new Map(tasks.map((task) => [task.name, task]));
  const depths = new Map<string, number>();
  const depthOf = (name: string, visiting: Set<string>): number => {
    const known = depths.get(name);
    if (known !== undefined) return known;
    const dependencies = byName.get(name)?.dependencies ?? [];
    // Cycles are refused by the server; the guard only keeps a bad answer from looping.
    visiting.add(name);
    const depth = Math.max(
      0,
      ...dependencies
        .filter((dependency) => !visiting.has(dependency))
        .map((dependency) => 1 + depthOf(dependency, visiting)),
    );
    visiting.delete(name);
    depths.set(name, depth);
    return depth;
  };
  const key = (task: Task) => [depthOf(task.name, new Set()), task.name, task.instance_id] as const;
  return [...tasks].sort((a, b) => {
    const [depthA, nameA, instanceA] = key(a);
    const [depthB, nameB, instanceB] = key(b);
    return depthA - depthB || (nameA < nameB ? -1 : nameA > nameB ? 1 : instanceA - instanceB);
  });
}

type Renderer = (states: PipelineState[]) => void;

/** A line for each change of status: for logs and pipes. */
function lineRenderer(out: Terminal): Renderer {
  const shown = new Map<string, string>();
  const report = (key: string, label: string, status: string) => {
    if (shown.get(key) === status) return;
    shown.set(key, status);
    out.write(`${label}: ${status}\n`);
  };
  return (states) => {
    for (const { pipeline, tasks } of states) {
      // A pipeline's end is told after the ends of its tasks.
      const reportPipeline = () => report(pipeline.id, `${pipeline.name} ${pipeline.id}`, pipeline.status);
      if (!isFinal(pipeline.status)) reportPipeline();
      for (const task of tasks)
        report(task.id, `${pipeline.name}/${taskLabel(task)}`, task.status + attemptNote(task));
      reportPipeline();
    }
  };
}

/** One block of lines redrawn in place: the statuses of every pipeline and task, live. */
function liveRenderer(out: Terminal): Renderer {
  let drawn = 0;
  return (states) => {
    const width = Math.max(20, (out.columns ?? 80) - 1);
    const lines = states.flatMap(({ pipeline, tasks }) => {
      const labelWidth = Math.max(0, ...tasks.map((task) => taskLabel(task).length));
      return [
        `${pipeline.name} ${pipeline.id}  ${pipeline.status}  ${formatDuration(pipeline.start_time, pipeline.end_time)}`,
        ...tasks.map(
          (task) =>
            `  ${taskLabel(task).padEnd(labelWidth)}  ${(task.status + attemptNote(task)).padEnd(10)}  ${formatDuration(task.start_time, task.end_time)}`,
        ),
      ];
    });
    // Back to the first line of the previous block, erase it, draw again; lines never wrap.
    const rewind = drawn > 0 ? `\r\x1b[${drawn}A\x1b[J` : '';
    out.write(rewind + lines.map((line) => `${line.slice(0, width).trimEnd()}\n`).join(''));
    drawn = lines.length;
  };
}

/** Time between two drawings of the live block on a terminal, for its durations. */
const REDRAW_MS = 500;

/** How far a status has come: waiting, running, ended. */
const stage = (status: string) => (isFinal(status) ? 2 : status === 'started' ? 1 : 0);

/**
 * Whether a message holds an older state than the one shown. The server reads an object when it
 * sends its message: one sent between the stream's start and the program's first read of the
 * pipelines holds a state that read has passed. Statuses only go forward within a run and
 * attempt, and those only grow, while the program follows.
 */
const olderPipeline = (incoming: Pipeline, shown: Pipeline) => stage(incoming.status) < stage(shown.status);
const olderTask = (incoming: Task, shown: Task) =>
  incoming.run !== shown.run
    ? incoming.run < shown.run
    : incoming.retry !== shown.retry
      ? incoming.retry < shown.retry
      : stage(incoming.status) < stage(shown.status);

/**
 * Follows pipelines until every one has ended, showing their tasks' statuses on `out`:
 * redrawn in place on a terminal, a line per change otherwise. It reads the stream of the
 * project's changes: once the stream has started, the pipelines and their tasks as they are,
 * then each change as it comes; the stream resumes by itself after a cut, and says when it could
 * not (`reset`): they are read again then. Ctrl-C stops it (the pipelines go on). Resolves to
 * the final states.
 */
export async function followPipelines(
  client: ApiClient,
  ids: string[],
  out: Terminal,
): Promise<PipelineState[]> {
  const render = out.isTTY ? liveRenderer(out) : lineRenderer(out);
  const states = new Map<string, PipelineState>();
  const read = async (which: string[]) => {
    for (const state of await Promise.all(which.map((id) => readState(client, id)))) {
      states.set(state.pipeline.id, state);
    }
  };
  /** The state a change is of, while its pipeline has not ended. */
  const following = (pipelineId: string) => {
    const state = states.get(pipelineId);
    return state && !isFinal(state.pipeline.status) ? state : undefined;
  };
  // One pipeline: the server sends only its changes. Several: the project's, sorted out here.
  const [only, ...others] = ids;
  const filters = only && others.length === 0 ? { pipeline_id: only } : {};
  const current = () => ids.flatMap((id) => states.get(id) ?? []);
  // On a terminal, the durations of what runs go on between changes: the block is drawn again.
  const redraw = () => {
    if (states.size > 0) render(current());
  };
  const clock = out.isTTY ? setInterval(redraw, REDRAW_MS) : undefined;
  const stop = new AbortController();
  try {
    for await (const change of projectChanges(client, filters, { signal: stop.signal })) {
      if (change.event === 'start') {
        if (states.size > 0 && !change.data.reset) continue;
        await read(ids);
      } else if (change.event === 'pipeline') {
        const state = following(change.data.id);
        if (!state || olderPipeline(change.data, state.pipeline)) continue;
        // An ended pipeline is read again with its tasks: its end is told with theirs, as they are.
        if (isFinal(change.data.status)) await read([change.data.id]);
        else state.pipeline = change.data;
      } else if (change.event === 'task') {
        const task = change.data;
        const state = following(task.pipeline_id);
        const shown = state?.tasks.find((candidate) => candidate.id === task.id);
        if (!state || (shown && olderTask(task, shown))) continue;
        state.tasks = inPipelineOrder([...state.tasks.filter((candidate) => candidate !== shown), task]);
      } else if (change.event === 'end') {
        // The server stopping: the stream resumes by itself once it is back.
        if (change.data.reason === 'server_stopping') continue;
        throw new CliError(`the server ended the stream of changes (${change.data.reason})`);
      } else {
        continue;
      }
      const ordered = current();
      render(ordered);
      if (ordered.every((state) => isFinal(state.pipeline.status))) return ordered;
    }
  } finally {
    clearInterval(clock);
    stop.abort();
  }
  throw new CliError('the stream of changes closed before the pipelines ended');
}

/** The output of the failed steps of the failed tasks (the last attempt of their current run). */
export async function reportFailures(
  client: ApiClient,
  states: PipelineState[],
  out: Terminal,
): Promise<void> {
  for (const { pipeline, tasks } of states) {
    for (const task of tasks.filter((candidate) => candidate.status === 'failed')) {
      out.write(
        `\n${pipeline.name}/${taskLabel(task)} failed: ${task.failure_message ?? 'no reason given'}\n`,
      );
      const { data: steps = [] } = await client.GET('/tasks/id/{id}/steps', {
        params: { path: { id: task.id }, query: { run: task.run } },
      });
      for (const step of steps.filter((each) => each.attempt === task.retry && each.status === 'failed')) {
        out.write(renderStepOutput(step, false));
      }
    }
  }
}

/**
 * Follows the pipelines to their end, then shows what failed. Resolves to the exit status:
 * 0 when every pipeline is successful, 1 otherwise.
 */
export async function followToEnd(client: ApiClient, ids: string[], out: Terminal) {
  const states = await followPipelines(client, ids, out);
  await reportFailures(client, states, out);
  return { states, status: states.every((state) => state.pipeline.status === 'successful') ? 0 : 1 };
}
