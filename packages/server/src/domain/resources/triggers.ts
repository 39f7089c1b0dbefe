import type { Schemas } from '@pipewright/types';
import type { JsvError } from '../errors.js';
import { compileFilterPattern } from '../events/filter-patterns.js';
import { pointer } from '../json-pointer.js';

type TriggerSpec = Extract<Schemas['ResourceSpec'], { type: 'trigger' }>;

/**
 * The regular expressions of a trigger's filters that the engine refuses (not RE2 syntax, or
 * too large), each pointed at. They are compiled here, so events find them compiled.
 */
export function checkTriggerFilters(spec: TriggerSpec, at: string): JsvError[] {
  const problems: JsvError[] = [];
  (spec.data.filters ?? []).forEach((filter, index) => {
    for (const predicate of ['matches', 'does_not_match'] as const) {
      const pattern = filter[predicate];
      if (pattern === undefined) continue;
      const compiled = compileFilterPattern(pattern);
      if ('problem' in compiled) {
        problems.push({
          pointer: pointer(at, 'data', 'filters', index, predicate),
          reason: compiled.problem,
        });
      }
    }
  });
  return problems;
}
