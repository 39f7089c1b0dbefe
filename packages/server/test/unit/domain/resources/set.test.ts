import type { Schemas } from '@pipewright/types';
import { describe, expect, it } from 'vitest';
import { checkResourceSet } from '../../../../src/domain/resources/set.js';

type Parameter = Schemas['CommandParameter'];
/** Specs as users write them: members with a default may be left out, unlike in the generated types. */
type Spec = { type: Schemas['ResourceSpec']['type']; version: number; name: string; data: object };
type Entry = { task: string; name?: string; dependencies?: string[]; parameters?: Record<string, unknown> };

const task = (name: string, parameters?: Parameter[]): Spec => ({
  type: 'task',
  version: 1,
  name,
  data: { ...(parameters ? { parameters } : {}), steps: [{ code: 'true' }] },
});
const pipeline = (name: string, ...tasks: Entry[]): Spec => ({
  type: 'pipeline',
  version: 1,
  name,
  data: { tasks },
});
const command = (name: string, pipelines: string[], parameters: Parameter[] = []): Spec => ({
  type: 'command',
  version: 1,
  name,
  data: { parameters, pipelines },
});
const trigger = (name: string, pipelines: string[]): Spec => ({
  type: 'trigger',
  version: 1,
  name,
  data: { connector: 'custom', event: 'push', parameters: {}, pipelines },
});

const channel: Parameter = { name: 'channel', type: 'string', values: ['stable', 'beta'] };
const retries: Parameter = { name: 'retries', type: 'number', default: 1 };
const release = task('release', [channel, retries]);

/** Every spec valid against its schema. */
const check = (...specs: Spec[]) =>
  checkResourceSet(
    specs.map((spec, index) => ({
      index,
      type: spec.type,
      name: spec.name,
      spec: spec as Schemas['ResourceSpec'],
    })),
  );

// Each rule: a set that keeps it, and one that breaks it with the expected problems.
describe('checkResourceSet', () => {
  it.each([
    { rule: 'names are unique per type', specs: [task('a'), pipeline('a', { task: 'a' })] },
    {
      rule: 'triggers name pipelines of the set',
      specs: [task('a'), pipeline('p', { task: 'a' }), trigger('t', ['p'])],
    },
    {
      rule: 'commands name pipelines of the set',
      specs: [task('a'), pipeline('p', { task: 'a' }), command('c', ['p'])],
    },
    {
      rule: 'entries of a pipeline have unique names',
      specs: [task('a'), pipeline('p', { task: 'a' }, { name: 'a-again', task: 'a' })],
    },
    {
      rule: 'dependencies name entries, by their own name or their task',
      specs: [task('a'), pipeline('p', { name: 'first', task: 'a' }, { task: 'a', dependencies: ['first'] })],
    },
    {
      rule: 'a dependency graph without cycle',
      specs: [
        task('a'),
        pipeline(
          'p',
          { name: 'top', task: 'a' },
          { name: 'left', task: 'a', dependencies: ['top'] },
          { name: 'right', task: 'a', dependencies: ['top'] },
          { name: 'bottom', task: 'a', dependencies: ['left', 'right'] },
        ),
      ],
    },
    {
      rule: 'task parameters are given when required, with values of their type and list',
      specs: [release, pipeline('p', { task: 'release', parameters: { channel: 'beta', retries: 3 } })],
    },
    {
      rule: 'optional task parameters may be left out',
      specs: [release, pipeline('p', { task: 'release', parameters: { channel: 'beta' } })],
    },
    {
      rule: 'declared parameters have unique names and defaults among their values',
      specs: [command('c', [], [{ ...channel, default: 'beta' }, retries])],
    },
  ])('accepts a set where $rule', ({ specs }) => {
    expect(check(...specs)).toEqual([]);
  });

  it.each([
    {
      rule: 'a name repeated in a type',
      specs: [task('a'), task('b'), task('a')],
      problems: [{ pointer: '/specs/2/name', reason: 'a task named "a" is already defined at /specs/0' }],
    },
    {
      rule: 'a trigger naming an unknown pipeline',
      specs: [task('a'), pipeline('deploy', { task: 'a' }), trigger('t', ['deploy', 'deploi'])],
      problems: [
        {
          pointer: '/specs/2/data/pipelines/1',
          reason: 'unknown pipeline "deploi" (did you mean "deploy"?)',
        },
      ],
    },
    {
      rule: 'a command naming an unknown pipeline',
      specs: [command('c', ['nightly'])],
      problems: [{ pointer: '/specs/0/data/pipelines/0', reason: 'unknown pipeline "nightly"' }],
    },
    {
      rule: 'a pipeline naming an unknown task',
      specs: [task('build'), pipeline('p', { task: 'biuld' })],
      problems: [
        { pointer: '/specs/1/data/tasks/0/task', reason: 'unknown task "biuld" (did you mean "build"?)' },
      ],
    },
    {
      rule: 'a pipeline naming a task of another type',
      specs: [pipeline('p', { task: 'p' })],
      problems: [{ pointer: '/specs/0/data/tasks/0/task', reason: 'unknown task "p"' }],
    },
    {
      rule: 'two entries named after the same task',
      specs: [task('a'), pipeline('p', { task: 'a' }, { task: 'a' })],
      problems: [
        {
          pointer: '/specs/1/data/tasks/1',
          reason:
            'entry name "a" is already used by entry 0 of the pipeline; give one of them a distinct "name"',
        },
      ],
    },
    {
      rule: 'an explicit entry name already used',
      specs: [task('a'), task('b'), pipeline('p', { task: 'a' }, { name: 'a', task: 'b' })],
      problems: [
        {
          pointer: '/specs/2/data/tasks/1/name',
          reason: 'entry name "a" is already used by entry 0 of the pipeline',
        },
      ],
    },
    {
      rule: 'a dependency on no entry',
      specs: [
        task('build'),
        task('test'),
        pipeline('p', { task: 'build' }, { task: 'test', dependencies: ['biuld'] }),
      ],
      problems: [
        {
          pointer: '/specs/2/data/tasks/1/dependencies/0',
          reason: 'no entry of the pipeline is named "biuld" (did you mean "build"?)',
        },
      ],
    },
    {
      rule: 'a dependency on a task resource that is no entry',
      specs: [task('a'), task('b'), pipeline('p', { task: 'a', dependencies: ['b'] })],
      problems: [
        { pointer: '/specs/2/data/tasks/0/dependencies/0', reason: 'no entry of the pipeline is named "b"' },
      ],
    },
    {
      rule: 'a dependency cycle',
      specs: [
        task('a'),
        pipeline(
          'p',
          { name: 'one', task: 'a', dependencies: ['three'] },
          { name: 'two', task: 'a', dependencies: ['one'] },
          { name: 'three', task: 'a', dependencies: ['two'] },
        ),
      ],
      problems: [
        {
          pointer: '/specs/1/data/tasks/1/dependencies/0',
          reason: 'dependency cycle: two -> one -> three -> two',
        },
      ],
    },
    {
      rule: 'an entry depending on itself',
      specs: [task('a'), pipeline('p', { task: 'a', dependencies: ['a'] })],
      problems: [{ pointer: '/specs/1/data/tasks/0/dependencies/0', reason: 'dependency cycle: a -> a' }],
    },
    {
      rule: 'a parameter the task does not declare',
      specs: [release, pipeline('p', { task: 'release', parameters: { channel: 'beta', chanel: 'beta' } })],
      problems: [
        {
          pointer: '/specs/1/data/tasks/0/parameters/chanel',
          reason: 'task "release" has no parameter "chanel" (did you mean "channel"?)',
        },
      ],
    },
    {
      rule: 'a parameter value of the wrong type',
      specs: [release, pipeline('p', { task: 'release', parameters: { channel: 'beta', retries: '3' } })],
      problems: [
        {
          pointer: '/specs/1/data/tasks/0/parameters/retries',
          reason: 'must be a number, the type of parameter "retries" of task "release"',
        },
      ],
    },
    {
      rule: 'a parameter value outside its values',
      specs: [release, pipeline('p', { task: 'release', parameters: { channel: 'nightly' } })],
      problems: [
        {
          pointer: '/specs/1/data/tasks/0/parameters/channel',
          reason: 'must be one of the values of parameter "channel" of task "release": "stable" or "beta"',
        },
      ],
    },
    {
      rule: 'a required parameter not given',
      specs: [release, pipeline('p', { task: 'release' })],
      problems: [
        {
          pointer: '/specs/1/data/tasks/0/parameters/channel',
          reason: 'is required: task "release" declares parameter "channel" without a default',
        },
      ],
    },
    {
      rule: 'a parameter declared twice',
      specs: [task('a', [retries, channel, { ...retries, type: 'number' }])],
      problems: [
        {
          pointer: '/specs/0/data/parameters/2/name',
          reason: 'parameter "retries" is already declared at /specs/0/data/parameters/0',
        },
      ],
    },
    {
      rule: 'a default outside the values',
      specs: [command('c', [], [{ ...channel, default: 'nightly' }])],
      problems: [
        {
          pointer: '/specs/0/data/parameters/0/default',
          reason: `must be one of the parameter's values: "stable" or "beta"`,
        },
      ],
    },
  ])('reports $rule', ({ specs, problems }) => {
    expect(check(...specs)).toEqual(problems);
  });

  it('counts specs that failed their schema as defined, without reading them', () => {
    const problems = checkResourceSet([
      { index: 0, type: 'task', name: 'release' },
      {
        index: 1,
        type: 'pipeline',
        name: 'p',
        spec: pipeline('p', { task: 'release', parameters: { any: 1 } }) as Schemas['ResourceSpec'],
      },
      { index: 2, type: 'trigger', name: 't', spec: trigger('t', ['p']) as Schemas['ResourceSpec'] },
      { index: 3, type: 'pipeline', name: 'p' },
    ]);
    expect(problems).toEqual([
      { pointer: '/specs/3/name', reason: 'a pipeline named "p" is already defined at /specs/1' },
    ]);
  });

  it('reports more problems than a function call takes arguments', () => {
    const dependencies = Array.from({ length: 200_000 }, (_, i) => `missing-${i}`);
    expect(check(task('a'), pipeline('p', { task: 'a', dependencies }))).toHaveLength(200_000);
  });

  it('reports every problem of the set at once', () => {
    const problems = check(
      trigger('t', ['nowhere']),
      pipeline('p', { task: 'missing', dependencies: ['x'] }),
      task('p'),
      task('p'),
    );
    expect(problems.map((problem) => problem.pointer).sort()).toEqual([
      '/specs/0/data/pipelines/0',
      '/specs/1/data/tasks/0/dependencies/0',
      '/specs/1/data/tasks/0/task',
      '/specs/3/name',
    ]);
  });
});
