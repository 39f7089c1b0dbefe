import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  type DesiredSpec,
  type InstallationPlan,
  type InstalledResource,
  installationPlanner,
} from '../../../../src/domain/resources/diff.js';

const build = {
  type: 'task',
  name: 'build',
  data: { steps: [{ label: 'a', code: 'true' }, { code: 'false' }] },
};
const deploy = { type: 'pipeline', name: 'deploy', data: { tasks: [{ task: 'build' }] } };

function installed(id: string, spec: { type: string; name: string }): InstalledResource {
  return { id, type: spec.type, name: spec.name, spec: JSON.stringify(spec) };
}

describe('canonicalJson', () => {
  it.each([
    ['members in any order', { b: 1, a: { d: [1, 2], c: null } }, '{"a":{"c":null,"d":[1,2]},"b":1}'],
    ['arrays in their order', [{ y: 1, x: 2 }, 'z'], '[{"x":2,"y":1},"z"]'],
    ['scalars as JSON', 'a"b', '"a\\"b"'],
  ])('writes %s', (_case, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });
});

describe('installationPlanner', () => {
  const reordered = {
    name: 'build',
    data: { steps: [{ code: 'true', label: 'a' }, { code: 'false' }] },
    type: 'task',
  };
  const described = { ...build, description: 'Build it.' };
  const stepsSwapped = { ...build, data: { steps: [{ code: 'false' }, { label: 'a', code: 'true' }] } };
  const asPipeline = { type: 'pipeline', name: 'build', data: { tasks: [{ task: 'x' }] } };
  const renamed = { ...build, name: 'compile' };

  it.each<{
    case: string;
    before: InstalledResource[];
    after: DesiredSpec[];
    plan: Partial<InstallationPlan<DesiredSpec>>;
  }>([
    { case: 'a new spec is created', before: [], after: [build], plan: { create: [build] } },
    {
      case: 'the same spec is unchanged',
      before: [installed('1', build)],
      after: [build],
      plan: { unchanged: ['1'] },
    },
    {
      case: 'the same spec with members reordered is unchanged',
      before: [installed('1', build)],
      after: [reordered],
      plan: { unchanged: ['1'] },
    },
    {
      case: 'a changed spec is updated',
      before: [installed('1', build)],
      after: [described],
      plan: { update: [{ id: '1', spec: described }] },
    },
    {
      case: 'reordered steps are a change',
      before: [installed('1', build)],
      after: [stepsSwapped],
      plan: { update: [{ id: '1', spec: stepsSwapped }] },
    },
    {
      case: 'a missing spec is deleted',
      before: [installed('1', build)],
      after: [],
      plan: { delete: ['1'] },
    },
    {
      case: 'a rename is a delete and a create',
      before: [installed('1', build)],
      after: [renamed],
      plan: { create: [renamed], delete: ['1'] },
    },
    {
      case: 'the same name with another type is another resource',
      before: [installed('1', build)],
      after: [asPipeline],
      plan: { create: [asPipeline], delete: ['1'] },
    },
    {
      case: 'everything at once',
      before: [installed('1', build), installed('2', deploy), installed('3', renamed)],
      after: [described, deploy, asPipeline],
      plan: { create: [asPipeline], update: [{ id: '1', spec: described }], unchanged: ['2'], delete: ['3'] },
    },
  ])('$case', ({ before, after, plan }) => {
    const expected = { create: [], update: [], unchanged: [], delete: [], ...plan };
    const whole = installationPlanner(after);
    whole.compare(before);
    expect(whole.plan()).toEqual(expected);
    // The same plan when the installed resources come one page at a time.
    const paged = installationPlanner(after);
    for (const resource of before) paged.compare([resource]);
    expect(paged.plan()).toEqual(expected);
  });
});
