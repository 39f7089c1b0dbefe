import type { Schemas } from '@pipewright/types';
import type { JsvError } from '../errors.js';
import { pointer } from '../json-pointer.js';
import { createSuggest, quotedList, type Suggest } from './wording.js';

// Parameters of commands and tasks: what their schema cannot say about their declarations,
// and whether values given for them match (pipelines give values to their tasks).

export type Parameter = Schemas['CommandParameter'];
export type ParameterValue = Schemas['ParameterValue'];

/** Declarations with unique names, whose defaults are among their `values`. */
export function checkParameterDeclarations(parameters: readonly Parameter[], at: string): JsvError[] {
  const problems: JsvError[] = [];
  const firstIndex = new Map<string, number>();
  parameters.forEach((parameter, index) => {
    const first = firstIndex.get(parameter.name);
    if (first === undefined) firstIndex.set(parameter.name, index);
    else {
      problems.push({
        pointer: pointer(at, index, 'name'),
        reason: `parameter "${parameter.name}" is already declared at ${pointer(at, first)}`,
      });
    }
    if (
      parameter.values &&
      parameter.default !== undefined &&
      !parameter.values.includes(parameter.default)
    ) {
      problems.push({
        pointer: pointer(at, index, 'default'),
        reason: `must be one of the parameter's values: ${quotedList(parameter.values)}`,
      });
    }
  });
  return problems;
}

/**
 * Values given for the parameters of `owner` (`task "release"`): each one declared, of its
 * type and among its `values`; every parameter without a default given.
 */
export function checkParameterValues(
  declared: readonly Parameter[],
  given: Readonly<Record<string, ParameterValue>>,
  at: string,
  owner: string,
  suggest: Suggest = createSuggest(),
): JsvError[] {
  const problems: JsvError[] = [];
  const byName = new Map(declared.map((parameter) => [parameter.name, parameter]));
  for (const [name, value] of Object.entries(given)) {
    const parameter = byName.get(name);
    const of = `parameter "${name}" of ${owner}`;
    if (!parameter) {
      const hint = suggest(name, byName.keys());
      problems.push({ pointer: pointer(at, name), reason: `${owner} has no parameter "${name}"${hint}` });
    } else if (typeof value !== parameter.type) {
      problems.push({ pointer: pointer(at, name), reason: `must be a ${parameter.type}, the type of ${of}` });
    } else if (parameter.values && !parameter.values.includes(value as string)) {
      problems.push({
        pointer: pointer(at, name),
        reason: `must be one of the values of ${of}: ${quotedList(parameter.values)}`,
      });
    }
  }
  for (const parameter of declared) {
    if (parameter.default === undefined && !Object.hasOwn(given, parameter.name)) {
      problems.push({
        pointer: pointer(at, parameter.name),
        reason: `is required: ${owner} declares parameter "${parameter.name}" without a default`,
      });
    }
  }
  return problems;
}
