import { describe, expect, it } from 'vitest';
import { entryLinks, tasksToRerun } from '../../../../src/domain/execution/task-graph.js';

describe('entryLinks', () => {
  it.each([
    { case: 'no dependencies', entries: [{ name: 'a' }], links: { a: [0, []] } },
    {
      case: 'a chain',
      entries: [{ name: 'a' }, { name: 'b', dependencies: ['a'] }, { name: 'c', dependencies: ['b'] }],
      links: { a: [0, ['b']], b: [1, ['c']], c: [1, []] },
    },
    {
      case: 'every instance of a dependency holds its dependents',
      entries: [
        { name: 'a', nb_instances: 3 },
        { name: 'b', nb_instances: 2 },
        { name: 'c', dependencies: ['a', 'b'] },
      ],
      links: { a: [0, ['c']], b: [0, ['c']], c: [5, []] },
    },
    {
      case: 'a repeated dependency counts once',
      entries: [
        { name: 'a', nb_instances: 2 },
        { name: 'b', dependencies: ['a', 'a'] },
      ],
      links: { a: [0, ['b']], b: [2, []] },
    },
  ])('$case', ({ entries, links }) => {
    const found = Object.fromEntries(
      [...entryLinks(entries)].map(([name, link]) => [name, [link.blockers, link.dependents]]),
    );
    expect(found).toEqual(links);
  });

  it('links a chain of 100,000 entries (no work per entry that grows with the chain)', () => {
    const entries = Array.from({ length: 100_000 }, (_, i) => ({
      name: `e${i}`,
      ...(i > 0 ? { dependencies: [`e${i - 1}`] } : {}),
    }));
    const links = entryLinks(entries);
    expect(links.get('e99999')).toEqual({ blockers: 1, dependents: [] });
    expect(links.get('e0')).toEqual({ blockers: 0, dependents: ['e1'] });
  });
});

describe('tasksToRerun', () => {
  const node = (name: string, status: string, dependencies: string[] = [], id = name) => ({
    id,
    name,
    status,
    dependencies,
  });

  it.each([
    { case: 'nothing failed', tasks: [node('a', 'successful')], rerun: [] },
    {
      case: 'the failed task and what depends on it, directly or not',
      tasks: [
        node('a', 'successful'),
        node('b', 'failed', ['a']),
        node('c', 'aborted', ['b']),
        node('d', 'aborted', ['c']),
        node('e', 'successful', ['a']),
      ],
      rerun: ['b', 'c', 'd'],
    },
    {
      case: 'every instance of an entry that depends on a failed one',
      tasks: [
        node('a', 'failed'),
        node('b', 'successful', ['a'], 'b1'),
        node('b', 'successful', ['a'], 'b2'),
      ],
      rerun: ['a', 'b1', 'b2'],
    },
  ])('$case', ({ tasks, rerun }) => {
    expect(tasksToRerun(tasks)).toEqual(rerun);
  });

  it('walks a chain of 100,000 tasks failed at its start', () => {
    const tasks = Array.from({ length: 100_000 }, (_, i) =>
      node(`e${i}`, i === 0 ? 'failed' : 'aborted', i > 0 ? [`e${i - 1}`] : []),
    );
    expect(tasksToRerun(tasks)).toHaveLength(100_000);
  });
});
