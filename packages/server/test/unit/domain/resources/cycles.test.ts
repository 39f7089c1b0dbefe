import { describe, expect, it } from 'vitest';
import { findCycles } from '../../../../src/domain/resources/cycles.js';

/** `"a:b,c"` is node a depending on b and c. */
const graph = (...nodes: string[]) =>
  nodes.map((node) => {
    const [name = '', dependencies = ''] = node.split(':');
    return { name, dependencies: dependencies ? dependencies.split(',') : [] };
  });

describe('findCycles', () => {
  it.each([
    { case: 'no nodes', nodes: graph(), cycles: [] },
    { case: 'a chain', nodes: graph('a', 'b:a', 'c:b'), cycles: [] },
    { case: 'a diamond', nodes: graph('a', 'b:a', 'c:a', 'd:b,c'), cycles: [] },
    { case: 'unknown names', nodes: graph('a:nowhere'), cycles: [] },
    {
      case: 'a self dependency',
      nodes: graph('a:a'),
      cycles: [{ node: 0, dependency: 0, path: ['a', 'a'] }],
    },
    {
      case: 'a two-node cycle',
      nodes: graph('a:b', 'b:a'),
      cycles: [{ node: 1, dependency: 0, path: ['b', 'a', 'b'] }],
    },
    {
      case: 'a cycle off a chain, reported at the dependency that closes it',
      nodes: graph('a', 'b:a,d', 'c:b', 'd:c'),
      cycles: [{ node: 2, dependency: 0, path: ['c', 'b', 'd', 'c'] }],
    },
    {
      case: 'two separate cycles',
      nodes: graph('a:b', 'b:a', 'c:d', 'd:c'),
      cycles: [
        { node: 1, dependency: 0, path: ['b', 'a', 'b'] },
        { node: 3, dependency: 0, path: ['d', 'c', 'd'] },
      ],
    },
    {
      case: 'a repeated name, which designates its first node',
      nodes: graph('a:b', 'b', 'b:a'),
      cycles: [],
    },
  ])('$case', ({ nodes, cycles }) => {
    expect(findCycles(nodes)).toEqual(cycles);
  });

  it('walks a chain of 100,000 nodes without overflowing the stack', () => {
    const nodes = Array.from({ length: 100_000 }, (_, i) => ({ name: `n${i}`, dependencies: [`n${i + 1}`] }));
    nodes.push({ name: 'n100000', dependencies: ['n0'] });
    expect(findCycles(nodes)).toEqual([
      expect.objectContaining({ node: 100_000, dependency: 0, path: expect.any(Array) }),
    ]);
  });
});
