import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openapiDocument } from '@pipewright/types';
import { describe, expect, it } from 'vitest';
import { documentedProperties } from '../helpers/documented-properties.js';
import { declaresTitle } from '../helpers/test-titles.js';
import { COVERAGE, KNOWN_GAPS, type TestReference } from '../spec-coverage.js';

// Every property a client may send has a test that asserts its effect (test/spec-coverage.ts
// names it), so that a property added to the spec fails the tests until one does.

const SERVER_PACKAGE = fileURLToPath(new URL('../../', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../../../', import.meta.url));

const properties = documentedProperties(openapiDocument, ['#/components/schemas/ResourceSpec']);
const listed = (property: string) => property in COVERAGE || property in KNOWN_GAPS;

const sources = new Map<string, string | undefined>();
function sourceOf(file: string): string | undefined {
  if (!sources.has(file)) {
    const path = `${file.startsWith('test/') ? SERVER_PACKAGE : REPOSITORY}${file}`;
    sources.set(file, existsSync(path) ? readFileSync(path, 'utf8') : undefined);
  }
  return sources.get(file);
}

/** What is wrong with a reference (`file > title`), or undefined when it names a test of that file. */
function referenceProblem(reference: TestReference): string | undefined {
  const [file = '', ...titles] = reference.split(' > ');
  if (titles.length === 0) return `"${reference}" names no test: write "file > title"`;
  const source = sourceOf(file);
  if (source === undefined) return `${file} does not exist`;
  const absent = titles.filter((title) => !declaresTitle(source, title));
  return absent.length === 0
    ? undefined
    : `${file} declares no test or group titled ${absent.map((t) => JSON.stringify(t)).join(', ')}`;
}

describe('the spec coverage table', () => {
  it('finds the properties of request bodies and resource specs, through references and oneOfs', () => {
    expect(properties).toEqual(
      expect.arrayContaining([
        'ProjectData.name',
        'PipelineData.retention',
        'TaskStep.code',
        'TaskRuntime.parameters.image',
        'WeeklySchedule.second',
        'CustomEvent.event_time',
      ]),
    );
  });

  it('names a test for every property of a request body or resource spec, or a known gap', () => {
    const missing = properties.filter((property) => !listed(property));
    expect(missing, 'properties of the spec with no test in test/spec-coverage.ts').toEqual([]);
  });

  it('names only properties the spec has', () => {
    const stale = [...Object.keys(COVERAGE), ...Object.keys(KNOWN_GAPS)].filter(
      (property) => !properties.includes(property),
    );
    expect(stale, 'entries of test/spec-coverage.ts for properties the spec no longer has').toEqual([]);
  });

  it('names tests that exist', () => {
    const problems = Object.entries(COVERAGE).flatMap(([property, references]) =>
      [references].flat().flatMap((reference) => {
        const problem = referenceProblem(reference);
        return problem ? [`${property}: ${problem}`] : [];
      }),
    );
    expect(problems, 'references of test/spec-coverage.ts to tests that do not exist').toEqual([]);
  });

  it('says why each known gap is one', () => {
    for (const [property, reason] of Object.entries(KNOWN_GAPS)) {
      expect(reason.trim(), property).not.toBe('');
      // Printed on every run, so that the gaps stay in sight.
      console.warn(`known gap in the spec coverage: ${property}: ${reason}`);
    }
  });
});

describe('declaresTitle', () => {
  const source = [
    "describe('group', () => {",
    "  it('does a thing', () => {});",
    '  it("isn\'t quoted the same way", () => {});',
    "  it.each([['a oneshot', 1], ['run_once (the default)', 2]])('ticks %s on time', () => {});",
    '});',
  ].join('\n');

  it.each([
    ['a test', 'does a thing'],
    ['a group', 'group'],
    ['a double-quoted title', "isn't quoted the same way"],
    ['a case of an each', 'ticks a oneshot on time'],
    ['a case with parentheses', 'ticks run_once (the default) on time'],
  ])('finds %s', (_case, title) => {
    expect(declaresTitle(source, title)).toBe(true);
  });

  it.each([
    ['a title the file lacks', 'does another thing'],
    ['a part of a title', 'does a'],
    ['a case its table lacks', 'ticks a daily schedule on time'],
    ['a string that is no title', 'describe'],
  ])('refuses %s', (_case, title) => {
    expect(declaresTitle(source, title)).toBe(false);
  });
});
