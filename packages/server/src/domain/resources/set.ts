import type { Schemas } from '@pipewright/types';
import type { JsvError } from '../errors.js';
import { pointer } from '../json-pointer.js';
import { checkParameterDeclarations } from './parameters.js';
import { checkPipeline } from './pipelines.js';
import { checkTriggerFilters } from './triggers.js';
import { createSuggest } from './wording.js';

type ResourceSpec = Schemas['ResourceSpec'];
type TaskSpec = Schemas['TaskSpec'];

/**
 * A spec of the set whose type and name are known. `spec` is there only when the spec
 * matches its schema: the rules below read it; the others still count as defined, so that
 * references to them do not add errors to the ones their own spec already has.
 */
export interface SetEntry {
  index: number;
  type: ResourceSpec['type'];
  name: string;
  spec?: ResourceSpec | undefined;
}

const at = (index: number) => pointer('', 'specs', index);

/** The rules that span several specs of a set, with pointers into the request body. */
export function checkResourceSet(entries: readonly SetEntry[]): JsvError[] {
  const problems: JsvError[] = [];
  const firstIndex = new Map<string, number>();
  const pipelines = new Set<string>();
  const tasks = new Map<string, TaskSpec | undefined>();
  const suggest = createSuggest();
  for (const entry of entries) {
    const key = `${entry.type}/${entry.name}`;
    const first = firstIndex.get(key);
    if (first !== undefined) {
      problems.push({
        pointer: pointer(at(entry.index), 'name'),
        reason: `a ${entry.type} named "${entry.name}" is already defined at ${at(first)}`,
      });
      continue;
    }
    firstIndex.set(key, entry.index);
    if (entry.type === 'pipeline') pipelines.add(entry.name);
    if (entry.type === 'task') tasks.set(entry.name, entry.spec as TaskSpec | undefined);
  }

  for (const { index, spec } of entries) {
    if (!spec) continue;
    const here = at(index);
    if (spec.type === 'trigger' || spec.type === 'command') {
      spec.data.pipelines.forEach((name, position) => {
        if (!pipelines.has(name)) {
          problems.push({
            pointer: pointer(here, 'data', 'pipelines', position),
            reason: `unknown pipeline "${name}"${suggest(name, pipelines)}`,
          });
        }
      });
    }
    let found: JsvError[] = [];
    if (spec.type === 'pipeline') found = checkPipeline(spec, here, tasks, suggest);
    // Most tasks declare no parameter: no pointer is made for them.
    if ((spec.type === 'command' || spec.type === 'task') && spec.data.parameters?.length) {
      found = checkParameterDeclarations(spec.data.parameters, pointer(here, 'data', 'parameters'));
    }
    if (spec.type === 'trigger') found = checkTriggerFilters(spec, here);
    // One by one: push(...found) passes each problem as an argument, and a broken set can
    // have more problems than a call takes arguments.
    for (const problem of found) problems.push(problem);
  }
  return problems;
}
