import { describe, expect, it } from 'vitest';
import { DEFAULT_IGNORED, ignoreRules, isIgnored } from '../../src/deploy/ignore.js';

describe('isIgnored with one ignore file at the top', () => {
  it.each([
    // [patterns, path, is a directory, ignored]
    ['drafts/', 'drafts', true, true],
    ['drafts/', 'drafts', false, false],
    ['drafts/', 'a/drafts', true, true],
    ['/drafts/', 'a/drafts', true, false],
    ['scratch.yml', 'scratch.yml', false, true],
    ['scratch.yml', 'deep/er/scratch.yml', false, true],
    ['scratch.yml', 'scratch.yaml', false, false],
    ['*.old.yaml', 'tasks/build.old.yaml', false, true],
    ['tasks/*.yaml', 'tasks/build.yaml', false, true],
    ['tasks/*.yaml', 'other/tasks/build.yaml', false, false],
    ['tasks/*.yaml', 'tasks/sub/build.yaml', false, false],
    ['tasks/**/*.yaml', 'tasks/sub/deeper/build.yaml', false, true],
    ['tasks/**/*.yaml', 'tasks/build.yaml', false, true],
    ['**/gen', 'a/b/gen', true, true],
    ['b?ild.yaml', 'build.yaml', false, true],
    ['b?ild.yaml', 'bld.yaml', false, false],
    ['a+b.yaml', 'a+b.yaml', false, true],
    ['a+b.yaml', 'aab.yaml', false, false],
    ['*.y[a]ml', 'x.yaml', false, true],
    ['*.y[a]ml', 'x.yml', false, false],
    ['\\#draft.yaml', '#draft.yaml', false, true],
    ['# comment\n\n  \n', 'anything.yaml', false, false],
    ['*.yaml\n!keep.yaml', 'keep.yaml', false, false],
    ['*.yaml\n!keep.yaml', 'drop.yaml', false, true],
    ['!keep.yaml\n*.yaml', 'keep.yaml', false, true],
  ])('%j on %s (directory: %s) ignores it: %s', (patterns, path, isDirectory, ignored) => {
    expect(isIgnored([ignoreRules('', patterns)], path, isDirectory)).toBe(ignored);
  });
});

describe('isIgnored with several files, in order', () => {
  const defaults = ignoreRules('', DEFAULT_IGNORED);

  it('skips node_modules at any depth unless a later file re-includes it', () => {
    expect(isIgnored([defaults], 'node_modules', true)).toBe(true);
    expect(isIgnored([defaults], 'tools/node_modules', true)).toBe(true);
    expect(isIgnored([defaults], 'node_modules', false)).toBe(false);
    expect(isIgnored([defaults, ignoreRules('', '!node_modules/')], 'node_modules', true)).toBe(false);
  });

  it("reads a nested file's patterns relative to its own directory, after its parent's", () => {
    const top = ignoreRules('', '*.gen.yaml\n');
    const nested = ignoreRules('ci', '/local.yaml\n!keep.gen.yaml\n');
    const layers = [defaults, top, nested];
    expect(isIgnored(layers, 'ci/local.yaml', false)).toBe(true);
    expect(isIgnored(layers, 'local.yaml', false)).toBe(false);
    expect(isIgnored(layers, 'ci/sub/local.yaml', false)).toBe(false);
    expect(isIgnored(layers, 'ci/a.gen.yaml', false)).toBe(true);
    expect(isIgnored(layers, 'ci/keep.gen.yaml', false)).toBe(false);
    expect(isIgnored(layers, 'keep.gen.yaml', false)).toBe(true);
    // A directory whose name only starts like the nested one's is not under it.
    expect(isIgnored(layers, 'cid/local.yaml', false)).toBe(false);
  });
});
