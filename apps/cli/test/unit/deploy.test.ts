import { describe, expect, it } from 'vitest';
import { describeValidationErrors } from '../../src/deploy/load.js';
import { canonicalJson, fieldChanges, planChanges } from '../../src/deploy/plan.js';

const spec = (type: string, name: string, data: unknown = {}) => ({ type, version: 1, name, data });

describe('planChanges', () => {
  it('matches resources by type and name, and compares specs whatever the order of their members', () => {
    const installed = [
      { spec: spec('task', 'same', { steps: [{ code: 'true', label: 'x' }] }) },
      { spec: spec('task', 'changed', { steps: [] }) },
      { spec: spec('task', 'gone') },
      { spec: spec('pipeline', 'same') },
    ];
    const wanted = [
      { name: 'same', data: { steps: [{ label: 'x', code: 'true' }] }, version: 1, type: 'task' },
      spec('task', 'changed', { steps: [{ code: 'true' }] }),
      spec('command', 'same'),
      spec('task', 'new'),
      spec('pipeline', 'same'),
    ];

    expect(planChanges(installed, wanted)).toEqual({
      create: [
        { type: 'command', name: 'same' },
        { type: 'task', name: 'new' },
      ],
      update: [
        { type: 'task', name: 'changed', changes: [{ path: 'data.steps[0]', after: { code: 'true' } }] },
      ],
      delete: [{ type: 'task', name: 'gone' }],
      unchanged: [
        { type: 'pipeline', name: 'same' },
        { type: 'task', name: 'same' },
      ],
    });
  });

  it.each([
    [{ b: 1, a: [{ d: 2, c: 3 }] }, '{"a":[{"c":3,"d":2}],"b":1}'],
    [[3, 1, 2], '[3,1,2]'],
    ['text', '"text"'],
    [null, 'null'],
  ])('canonicalJson(%j) is %s', (value, json) => {
    expect(canonicalJson(value)).toBe(json);
  });
});

describe('describeValidationErrors', () => {
  const origins = [
    { file: 'tasks.yaml', document: 1 },
    { file: 'tasks.yaml', document: 3 },
    { file: 'ci/pipelines.yml', document: 1 },
  ];

  it.each([
    ['/specs/1/data/steps/0/code', 'tasks.yaml:3: /data/steps/0/code: bad'],
    ['/specs/2', 'ci/pipelines.yml:1: /: bad'],
    ['/specs/0/name', 'tasks.yaml:1: /name: bad'],
    ['/specs/9/name', '/specs/9/name: bad'],
    ['/specs', '/specs: bad'],
    ['', '/: bad'],
  ])('maps %s', (pointer, line) => {
    expect(describeValidationErrors([{ pointer, reason: 'bad' }], origins)).toEqual([line]);
  });
});

describe('fieldChanges', () => {
  it.each([
    [{ a: 1 }, { a: 1 }, []],
    [{ a: 1, b: 2 }, { b: 2, a: 1 }, []],
    [
      { data: { steps: [{ command: 'a' }] } },
      { data: { steps: [{ command: 'b' }] } },
      [{ path: 'data.steps[0].command', before: 'a', after: 'b' }],
    ],
    [
      { data: { steps: [{ code: 'x' }] } },
      { data: { steps: [{ code: 'x' }, { code: 'y' }] } },
      [{ path: 'data.steps[1]', before: undefined, after: { code: 'y' } }],
    ],
    [
      { description: 'old', data: {} },
      { data: { environment: { 'MY-VAR': '1' } } },
      [
        { path: 'data.environment', before: undefined, after: { 'MY-VAR': '1' } },
        { path: 'description', before: 'old', after: undefined },
      ],
    ],
    [
      { data: { environment: { 'MY-VAR': '1', B: '2' } } },
      { data: { environment: { 'MY-VAR': '3', B: '2' } } },
      [{ path: 'data.environment["MY-VAR"]', before: '1', after: '3' }],
    ],
    [{ data: { tasks: [] } }, { data: { tasks: {} } }, [{ path: 'data.tasks', before: [], after: {} }]],
  ])('between %j and %j: %j', (before, after, changes) => {
    expect(fieldChanges(before, after)).toEqual(changes);
  });
});
