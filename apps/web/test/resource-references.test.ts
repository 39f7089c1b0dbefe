import type { Schemas } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { resourceReferences } from '../src/api/resource-references.js';
import { RESOURCES } from './helpers/resources.js';

// The cross-references the resources page shows, computed from the list of a project's resources.

const resources = RESOURCES.map(
  (spec, n) => ({ id: String(n), spec, disabled: false }) as unknown as Schemas['Resource'],
);
const referencesOf = resourceReferences(resources);
const find = (type: string, name: string) =>
  resources.find(
    (resource) => resource.spec.type === type && resource.spec.name === name,
  ) as Schemas['Resource'];

describe('resourceReferences', () => {
  it.each([
    ['task', 'build', [{ heading: 'Used by the pipelines', type: 'pipeline', names: ['check', 'release'] }]],
    ['task', 'publish', [{ heading: 'Used by the pipelines', type: 'pipeline', names: ['release'] }]],
    [
      'pipeline',
      'release',
      [
        { heading: 'Uses the tasks', type: 'task', names: ['build', 'publish', 'test'] },
        { heading: 'Started by the commands', type: 'command', names: ['deploy'] },
      ],
    ],
    [
      'pipeline',
      'check',
      [
        { heading: 'Uses the tasks', type: 'task', names: ['build'] },
        { heading: 'Started by the triggers', type: 'trigger', names: ['on-push', 'weekly-check'] },
      ],
    ],
    ['command', 'deploy', [{ heading: 'Starts the pipelines', type: 'pipeline', names: ['release'] }]],
    ['trigger', 'on-push', [{ heading: 'Starts the pipelines', type: 'pipeline', names: ['check'] }]],
  ])('gives the %s %s its references both ways', (type, name, expected) => {
    expect(referencesOf(find(type, name))).toEqual(expected);
  });

  it('names a task used by two entries of a pipeline once, and a lone resource nothing', () => {
    const specs = [
      { type: 'task', version: 1, name: 'lint', data: { steps: [] } },
      { type: 'task', version: 1, name: 'lone', data: { steps: [] } },
      {
        type: 'pipeline',
        version: 1,
        name: 'twice',
        data: { tasks: [{ task: 'lint' }, { name: 'lint-again', task: 'lint' }] },
      },
    ];
    const few = specs.map((spec, n) => ({ id: String(n), spec }) as unknown as Schemas['Resource']);
    const of = resourceReferences(few);
    expect(of(few[0] as Schemas['Resource'])).toEqual([
      { heading: 'Used by the pipelines', type: 'pipeline', names: ['twice'] },
    ]);
    expect(of(few[2] as Schemas['Resource'])).toEqual([
      { heading: 'Uses the tasks', type: 'task', names: ['lint'] },
    ]);
    expect(of(few[1] as Schemas['Resource'])).toEqual([]);
  });
});
