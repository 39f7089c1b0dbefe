import { openapiDocument } from '@pipewright/types';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { explainSchemaErrors, oneOfShape } from '../../../../src/domain/resources/schema-errors.js';
import { createSpecValidator } from '../../../../src/services/resources/spec-schemas.js';

const { validate } = createSpecValidator();

const task = (data: Record<string, unknown>) => ({
  type: 'task',
  version: 1,
  name: 't',
  data: { steps: [{ code: 'true' }], ...data },
});
const pipeline = (entry: Record<string, unknown>, data: Record<string, unknown> = {}) => ({
  type: 'pipeline',
  version: 1,
  name: 'p',
  data: { tasks: [{ task: 't', ...entry }], ...data },
});
const trigger = (filter: Record<string, unknown>) => ({
  type: 'trigger',
  version: 1,
  name: 'on-push',
  data: { connector: 'custom', event: 'push', filters: [filter], pipelines: ['p'] },
});
const timeTrigger = (data: Record<string, unknown>) => ({
  type: 'trigger',
  version: 1,
  name: 'nightly',
  data: { connector: 'time', event: 'tick', pipelines: ['p'], ...data },
});
const parameter = (declaration: Record<string, unknown>) =>
  task({ parameters: [{ name: 'x', ...declaration }] });

// Each rule of the schemas: a spec that keeps it, and one that breaks it with the exact
// problems reported: only those of the spec's own type, and of the meant `oneOf` branch.
describe('validate (the schema of a spec, chosen by its type)', () => {
  it.each([
    ['a task', task({})],
    [
      'a pipeline with limits at their bounds',
      pipeline({ nb_instances: 10, nb_retries: 10, retry_delay: 86400 }),
    ],
    [
      'a string parameter with values and a default',
      parameter({ type: 'string', values: ['a', 'b'], default: 'a' }),
    ],
    ['a number parameter with a number default', parameter({ type: 'number', default: 2.5 })],
    ['a step with a command', task({ steps: [{ command: 'npm', arguments: ['ci'] }] })],
    [
      'a container runtime with an image',
      task({ runtime: { name: 'container', parameters: { image: 'node:22' } } }),
    ],
    ['a filter with a Unicode regular expression', trigger({ path: '/branch', matches: '^\\p{L}+$' })],
    ['environment variables', task({ environment: { NODE_ENV: 'production', _X1: '' } })],
    [
      'a oneshot schedule with an offset',
      timeTrigger({ parameters: { oneshot: '2026-12-31T23:00:00+01:00' } }),
    ],
    [
      'a periodic schedule and a missed policy',
      timeTrigger({ parameters: { periodic: 1, missed: 'run_all' } }),
    ],
    ['an hourly schedule at its bounds', timeTrigger({ parameters: { hourly: { minute: 59, second: 59 } } })],
    ['a daily schedule with omitted members', timeTrigger({ parameters: { daily: { hour: 23 } } })],
    [
      'a weekly schedule',
      timeTrigger({ parameters: { weekly: { day: 'sunday', hour: 0 }, missed: 'skip' } }),
    ],
    [
      'a time trigger with filters on the tick',
      timeTrigger({ parameters: { daily: {} }, filters: [{ path: '/scheduled_time', matches: '-01T' }] }),
    ],
    [
      'any parameters on a custom trigger, even a schedule',
      timeTrigger({ connector: 'custom', event: 'push', parameters: { daily: { hour: 99 }, x: 1 } }),
    ],
  ])('accepts %s', (_case, spec) => {
    expect(validate(spec)).toEqual([]);
  });

  it.each([
    ['not an object', [], [{ pointer: '', reason: 'must be an object' }]],
    [
      'no type',
      { name: 'x' },
      [{ pointer: '/type', reason: 'is required ("trigger", "command", "pipeline" or "task")' }],
    ],
    [
      'an unknown type, whatever else is wrong',
      { type: 'job', name: 'X' },
      [{ pointer: '/type', reason: 'must be "trigger", "command", "pipeline" or "task"' }],
    ],
    ['another version', { ...task({}), version: 2 }, [{ pointer: '/version', reason: 'must be 1' }]],
    [
      'a malformed name',
      { ...task({}), name: 'Build' },
      [
        {
          pointer: '/name',
          reason:
            'must be a name: 1 to 100 lowercase letters, digits, "_" or "-", starting with a letter or a digit',
        },
      ],
    ],
    [
      'an unknown member',
      task({ colour: 'red' }),
      [{ pointer: '/data/colour', reason: 'is an unknown member' }],
    ],
    ['no steps', task({ steps: [] }), [{ pointer: '/data/steps', reason: 'must not be empty' }]],
    [
      'nb_instances 0',
      pipeline({ nb_instances: 0 }),
      [{ pointer: '/data/tasks/0/nb_instances', reason: 'must be at least 1' }],
    ],
    [
      'nb_instances 11',
      pipeline({ nb_instances: 11 }),
      [{ pointer: '/data/tasks/0/nb_instances', reason: 'must be at most 10' }],
    ],
    [
      'nb_retries 11',
      pipeline({ nb_retries: 11 }),
      [{ pointer: '/data/tasks/0/nb_retries', reason: 'must be at most 10' }],
    ],
    [
      'a fractional retry_delay',
      pipeline({ retry_delay: 1.5 }),
      [{ pointer: '/data/tasks/0/retry_delay', reason: 'must be an integer' }],
    ],
    [
      'a retention of 0 days',
      pipeline({}, { retention: 0 }),
      [{ pointer: '/data/retention', reason: 'must be at least 1' }],
    ],
    [
      'an unknown on_failure',
      pipeline({ on_failure: 'retry' }),
      [{ pointer: '/data/tasks/0/on_failure', reason: 'must be "abort" or "continue"' }],
    ],
    [
      'a repeated dependency',
      pipeline({ dependencies: ['a', 'b', 'a'] }),
      [{ pointer: '/data/tasks/0/dependencies/2', reason: 'repeats item 0' }],
    ],
    [
      'a malformed parameter name given to a task',
      pipeline({ parameters: { Channel: 'x' } }),
      [
        {
          pointer: '/data/tasks/0/parameters/Channel',
          reason:
            'invalid member name: must be a name: 1 to 100 lowercase letters, digits, "_" or "-", starting with a letter or a digit',
        },
      ],
    ],
    [
      'a parameter value that is no scalar',
      pipeline({ parameters: { channel: ['a'] } }),
      [{ pointer: '/data/tasks/0/parameters/channel', reason: 'must be a string, a number or a boolean' }],
    ],
    [
      'values on a number parameter',
      parameter({ type: 'number', values: ['1'] }),
      [{ pointer: '/data/parameters/0/values', reason: 'is not allowed when type is "number"' }],
    ],
    [
      'values on a boolean parameter',
      parameter({ type: 'boolean', values: ['yes'] }),
      [{ pointer: '/data/parameters/0/values', reason: 'is not allowed when type is "boolean"' }],
    ],
    [
      'a default of another type',
      parameter({ type: 'string', default: 3 }),
      [{ pointer: '/data/parameters/0/default', reason: 'must be a string when type is "string"' }],
    ],
    [
      'an unknown parameter type',
      parameter({ type: 'text', default: 3 }),
      [{ pointer: '/data/parameters/0/type', reason: 'must be "string", "number" or "boolean"' }],
    ],
    [
      'an empty values list',
      parameter({ type: 'string', values: [] }),
      [{ pointer: '/data/parameters/0/values', reason: 'must not be empty' }],
    ],
    [
      'a step with both command and code',
      task({ steps: [{ command: 'npm', code: 'npm ci' }] }),
      [{ pointer: '/data/steps/0', reason: 'must have only one of "command" and "code"' }],
    ],
    [
      'a step with neither command nor code',
      task({ steps: [{ label: 'nothing' }] }),
      [{ pointer: '/data/steps/0', reason: 'must have one of "command" or "code"' }],
    ],
    [
      'a container runtime without an image',
      task({ runtime: { name: 'container', parameters: {} } }),
      [{ pointer: '/data/runtime/parameters/image', reason: 'is required when name is "container"' }],
    ],
    [
      'a local runtime with parameters',
      task({ runtime: { name: 'local', parameters: { image: 'node:22' } } }),
      [{ pointer: '/data/runtime/parameters', reason: 'must be empty when name is "local"' }],
    ],
    [
      'an environment variable name with a dash',
      task({ environment: { 'NODE-ENV': 'x' } }),
      [
        {
          pointer: '/data/environment/NODE-ENV',
          reason: 'invalid member name: must match the pattern ^[A-Za-z_][A-Za-z0-9_]*$',
        },
      ],
    ],
    [
      'a filter without predicate',
      trigger({ path: '/branch' }),
      [
        {
          pointer: '/data/filters/0',
          reason: 'must have one of "is_equal_to", "is_not_equal_to", "matches" or "does_not_match"',
        },
      ],
    ],
    [
      'a filter with two predicates',
      trigger({ path: '/branch', is_equal_to: 'main', matches: 'x' }),
      [{ pointer: '/data/filters/0', reason: 'must have only one of "is_equal_to" and "matches"' }],
    ],
    [
      'a filter path that is no JSON pointer',
      trigger({ path: 'branch', is_equal_to: 'main' }),
      [
        {
          pointer: '/data/filters/0/path',
          reason: 'must be a JSON pointer (RFC 6901) such as "/branch", or "" for the whole value',
        },
      ],
    ],
    [
      'a regular expression longer than 500 characters',
      trigger({ path: '/branch', does_not_match: 'a'.repeat(501) }),
      [{ pointer: '/data/filters/0/does_not_match', reason: 'must be at most 500 characters long' }],
    ],
    [
      'an hour out of range in a daily schedule',
      timeTrigger({ parameters: { daily: { hour: 24, minute: 0 } } }),
      [{ pointer: '/data/parameters/daily/hour', reason: 'must be at most 23' }],
    ],
    [
      'a fractional minute and an unknown member in an hourly schedule',
      timeTrigger({ parameters: { hourly: { minute: 1.5, at: 3 } } }),
      [
        { pointer: '/data/parameters/hourly/at', reason: 'is an unknown member' },
        { pointer: '/data/parameters/hourly/minute', reason: 'must be an integer' },
      ],
    ],
    [
      'a weekly schedule without its day',
      timeTrigger({ parameters: { weekly: { hour: 8 } } }),
      [{ pointer: '/data/parameters/weekly/day', reason: 'is required' }],
    ],
    [
      'an unknown day',
      timeTrigger({ parameters: { weekly: { day: 'monday ' } } }),
      [
        {
          pointer: '/data/parameters/weekly/day',
          reason: 'must be "monday", "tuesday", "wednesday", "thursday", "friday", "saturday" or "sunday"',
        },
      ],
    ],
    [
      'a period of 0 seconds',
      timeTrigger({ parameters: { periodic: 0 } }),
      [{ pointer: '/data/parameters/periodic', reason: 'must be at least 1' }],
    ],
    [
      'a period longer than a year',
      timeTrigger({ parameters: { periodic: 31622401 } }),
      [{ pointer: '/data/parameters/periodic', reason: 'must be at most 31622400' }],
    ],
    [
      'a oneshot date without time',
      timeTrigger({ parameters: { oneshot: '2026-12-31' } }),
      [
        {
          pointer: '/data/parameters/oneshot',
          reason: 'must be a date and time (RFC 3339) with its offset, such as "2026-11-22T10:00:00Z"',
        },
      ],
    ],
    [
      'two schedules',
      timeTrigger({ parameters: { daily: {}, periodic: 60 } }),
      [{ pointer: '/data/parameters', reason: 'must have only one of "periodic" and "daily"' }],
    ],
    [
      'no schedule',
      timeTrigger({ parameters: { missed: 'skip' } }),
      [
        {
          pointer: '/data/parameters',
          reason: 'must have one of "oneshot", "periodic", "hourly", "daily" or "weekly"',
        },
      ],
    ],
    [
      'an unknown missed policy',
      timeTrigger({ parameters: { daily: {}, missed: 'catch_up' } }),
      [{ pointer: '/data/parameters/missed', reason: 'must be "skip", "run_once" or "run_all"' }],
    ],
    [
      'a time trigger without parameters',
      timeTrigger({}),
      [{ pointer: '/data/parameters', reason: 'is required when connector is "time"' }],
    ],
    [
      'a time trigger for another event than tick',
      timeTrigger({ event: 'push', parameters: { daily: {} } }),
      [{ pointer: '/data/event', reason: 'must be "tick" when connector is "time"' }],
    ],
    [
      'a webhook trigger of an unknown sender, with its secret in clear',
      timeTrigger({ connector: 'webhook', event: 'push', parameters: { sender: 'bitbucket', secret: 's' } }),
      [
        { pointer: '/data/parameters/secret', reason: 'is an unknown member when connector is "webhook"' },
        {
          pointer: '/data/parameters/sender',
          reason: 'must be "github", "gitlab" or "generic" when connector is "webhook"',
        },
      ],
    ],
    [
      'an unknown connector',
      timeTrigger({ connector: 'cron', parameters: { daily: {} } }),
      [{ pointer: '/data/connector', reason: 'must be "custom", "time" or "webhook"' }],
    ],
  ])('reports %s', (_case, spec, problems) => {
    expect(validate(spec)).toEqual(problems);
  });

  it('reports every problem of a spec at once, in document order', () => {
    const spec = task({
      steps: [{}, { code: '' }],
      parameters: [{ name: 'n', type: 'number', values: ['1'], default: 'x' }],
    });
    expect(validate({ ...spec, version: 0 })).toEqual([
      { pointer: '/version', reason: 'must be 1' },
      { pointer: '/data/parameters/0/values', reason: 'is not allowed when type is "number"' },
      { pointer: '/data/parameters/0/default', reason: 'must be a number when type is "number"' },
      { pointer: '/data/steps/0', reason: 'must have one of "command" or "code"' },
      { pointer: '/data/steps/1/code', reason: 'must not be empty' },
    ]);
  });

  it('leaves the spec as it was given: no defaults filled in', () => {
    const spec = pipeline({});
    const before = JSON.stringify(spec);
    expect(validate(spec)).toEqual([]);
    expect(JSON.stringify(spec)).toBe(before);
  });
});

type Schema = Record<string, unknown>;
const schemas = (openapiDocument.components as { schemas: Record<string, Schema> }).schemas;

/** Every schema object reachable from the resource spec schemas, following references. */
function specSubschemas(): Schema[] {
  const found = new Set<Schema>();
  const pending: unknown[] = ['TriggerSpec', 'CommandSpec', 'PipelineSpec', 'TaskSpec'].map(
    (name) => schemas[name],
  );
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null || found.has(next as Schema)) continue;
    if (!Array.isArray(next)) found.add(next as Schema);
    const ref = (next as Schema).$ref;
    if (typeof ref === 'string') pending.push(schemas[ref.replace('#/components/schemas/', '')]);
    pending.push(...Object.values(next));
  }
  return [...found];
}

// explainSchemaErrors relies on these properties of the spec; a spec change breaking one of
// them fails here rather than in a user's error messages.
describe('the oneOfs of the resource spec schemas', () => {
  const holders = specSubschemas().filter((schema) => Array.isArray(schema.oneOf));

  it('exist, so that these checks check something', () => {
    expect(holders.length).toBeGreaterThanOrEqual(4);
  });

  it.each(holders.map((schema) => [String(schema.description).slice(0, 60), schema]))(
    'are tagged or exclusive, with inline branches, and their schema requires and lists each tag: %s',
    (_description, schema) => {
      const branches = schema.oneOf as Schema[];
      expect(branches.every((branch) => !('$ref' in branch))).toBe(true);
      const shape = oneOfShape(branches);
      expect(shape).toBeDefined();
      if (shape?.kind === 'tagged') {
        expect(schema.required).toContain(shape.property);
        const tag = (schema.properties as Record<string, Schema>)[shape.property] ?? {};
        expect([...(tag.enum as unknown[])].sort()).toEqual([...shape.tags].sort());
      }
    },
  );
});

describe('explainSchemaErrors', () => {
  it('leaves a oneOf of another kind as the validator reported it', () => {
    const ajv = new Ajv2020({ allErrors: true, verbose: true });
    const check = ajv.compile({ oneOf: [{ type: 'string' }, { type: 'number', minimum: 3 }] });
    expect(check(1)).toBe(false);
    expect(explainSchemaErrors(check.errors ?? [])).toEqual([
      { pointer: '', reason: 'must be a string' },
      { pointer: '', reason: 'must be at least 3' },
      { pointer: '', reason: 'must match exactly one schema in oneOf' },
    ]);
  });
});
