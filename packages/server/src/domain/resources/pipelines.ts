import type { Schemas } from '@pipewright/types';
import type { JsvError } from '../errors.js';
import { pointer } from '../json-pointer.js';
import { findCycles } from './cycles.js';
import { checkParameterValues } from './parameters.js';
import type { Suggest } from './wording.js';

type PipelineSpec = Schemas['PipelineSpec'];
type TaskSpec = Schemas['TaskSpec'];

/** The name of an entry in its pipeline: its own, or its task's. */
export const entryName = (entry: Schemas['PipelineTask']): string => entry.name ?? entry.task;

/**
 * What a pipeline's schema cannot say: entry names unique in it, tasks that exist, values
 * given to the parameters of those tasks, dependencies on entries of the pipeline, no cycle.
 * `tasks` holds every task of the set by name; a task whose spec is invalid maps to
 * undefined: it exists, but its parameters cannot be relied on.
 */
export function checkPipeline(
  spec: PipelineSpec,
  at: string,
  tasks: ReadonlyMap<string, TaskSpec | undefined>,
  suggest: Suggest,
): JsvError[] {
  const problems: JsvError[] = [];
  const entries = spec.data.tasks;
  const names = new Set(entries.map(entryName));
  const firstIndex = new Map<string, number>();

  entries.forEach((entry, index) => {
    const here = pointer(at, 'data', 'tasks', index);
    const name = entryName(entry);
    const first = firstIndex.get(name);
    if (first === undefined) firstIndex.set(name, index);
    else {
      const fix = entry.name === undefined ? '; give one of them a distinct "name"' : '';
      problems.push({
        pointer: entry.name === undefined ? here : pointer(here, 'name'),
        reason: `entry name "${name}" is already used by entry ${first} of the pipeline${fix}`,
      });
    }

    if (!tasks.has(entry.task)) {
      problems.push({
        pointer: pointer(here, 'task'),
        reason: `unknown task "${entry.task}"${suggest(entry.task, tasks.keys())}`,
      });
    }
    const task = tasks.get(entry.task);
    if (task) {
      const declared = task.data.parameters ?? [];
      const given = entry.parameters ?? {};
      const owner = `task "${task.name}"`;
      const found = checkParameterValues(declared, given, pointer(here, 'parameters'), owner, suggest);
      for (const problem of found) problems.push(problem);
    }

    (entry.dependencies ?? []).forEach((dependency, position) => {
      if (!names.has(dependency)) {
        problems.push({
          pointer: pointer(here, 'dependencies', position),
          reason: `no entry of the pipeline is named "${dependency}"${suggest(dependency, names)}`,
        });
      }
    });
  });

  const nodes = entries.map((entry) => ({ name: entryName(entry), dependencies: entry.dependencies ?? [] }));
  for (const cycle of findCycles(nodes)) {
    problems.push({
      pointer: pointer(at, 'data', 'tasks', cycle.node, 'dependencies', cycle.dependency),
      reason: `dependency cycle: ${cycle.path.join(' -> ')}`,
    });
  }
  return problems;
}
