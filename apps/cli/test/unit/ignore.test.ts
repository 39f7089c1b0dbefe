import { describe, expect, it } from 'vitest';
import { parseIgnoreFile } from '../../src/deploy/ignore.js';

describe('parseIgnoreFile', () => {
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
    ['# comment\n\n  \n', 'anything.yaml', false, false],
    ['*.yaml\n!keep.yaml', 'keep.yaml', false, false],
    ['*.yaml\n!keep.yaml', 'drop.yaml', false, true],
    ['!keep.yaml\n*.yaml', 'keep.yaml', false, true],
  ])('%j on %s (directory: %s) ignores it: %s', (patterns, path, isDirectory, ignored) => {
    expect(parseIgnoreFile(patterns)(path, isDirectory)).toBe(ignored);
  });
});
