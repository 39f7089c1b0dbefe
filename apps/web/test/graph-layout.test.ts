import dagre from '@dagrejs/dagre';
import { describe, expect, it } from 'vitest';
import { layOutGraph } from '../src/ui/graph-layout.js';
import type { GraphShape, Point } from '../src/ui/graph-shape.js';
import { crossingsBetween, orderLayers } from '../src/ui/layer-order.js';

// The task graph's layout (run in a worker by the page): large graphs are ranked and ordered the
// cheap way, and must read about as well as with dagre's own (slow) phases.

const name = (n: number) => `t${String(n).padStart(3, '0')}`;

/** The benchmark's pipeline (bench/src/benchmarks/dashboard.ts): 20 layers of 10, two arrows in each. */
function layered(): GraphShape {
  const nodes = Array.from({ length: 200 }, (_, n) => name(n));
  const edges = nodes.flatMap((node, n): [string, string][] => {
    const before = (Math.floor(n / 10) - 1) * 10;
    return n < 10 ? [] : [name(before + (n % 10)), name(before + ((n + 1) % 10))].map((b) => [b, node]);
  });
  return { nodes, edges };
}

/** 150 tasks each waiting for 0 to 3 of the 20 before it: arrows across several columns. */
function tangled(): GraphShape {
  let seed = 7;
  const random = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  const nodes = Array.from({ length: 150 }, (_, n) => name(n));
  const edges = new Map<string, [string, string]>();
  for (let n = 5; n < nodes.length; n += 1) {
    for (let k = Math.floor(random() * 4); k > 0; k -= 1) {
      const before = name(Math.max(0, n - 1 - Math.floor(random() * 20)));
      edges.set(`${before} ${name(n)}`, [before, name(n)]);
    }
  }
  return { nodes, edges: [...edges.values()] };
}

/** A build, 60 test chains of two tasks, then a merge: drawn without a single crossing. */
function fan(): GraphShape {
  const chains = Array.from({ length: 60 }, (_, i) => [`a${i}`, `b${i}`] as const);
  return {
    nodes: ['build', ...chains.flat(), 'merge'],
    edges: chains.flatMap(([a, b]): [string, string][] => [
      ['build', a],
      [a, b],
      [b, 'merge'],
    ]),
  };
}

/** Pairs of arrow segments that cross, from the drawn points alone. */
function drawnCrossings(edges: Point[][]): number {
  const segments = edges.flatMap((points) => points.slice(1).map((end, i) => [points[i] as Point, end]));
  const side = (p: Point, q: Point, r: Point) =>
    Math.sign((q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x));
  let crossings = 0;
  for (const [i, [a, b]] of segments.entries()) {
    for (const [c, d] of segments.slice(i + 1)) {
      if (a && b && c && d && side(a, b, c) * side(a, b, d) < 0 && side(c, d, a) * side(c, d, b) < 0)
        crossings += 1;
    }
  }
  return crossings;
}

/**
 * The crossings of a graph's arrows between neighbouring ranks once dagre has laid it out, with
 * its own ordering or with orderLayers (the same ranking for both).
 */
function layerCrossings(shape: GraphShape, customOrder?: typeof orderLayers): number {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 48, ranker: 'tight-tree' });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of shape.nodes) graph.setNode(node, { width: 168, height: 46 });
  for (const [from, to] of shape.edges) graph.setEdge(from, to);
  // Long arrows become chains of dummy nodes inside dagre: count on the graph orderLayers sees.
  let counted = 0;
  dagre.layout(graph, {
    customOrder(layered, order) {
      if (customOrder) customOrder(layered);
      else order(layered);
      const position = new Map(layered.nodes().map((node) => [node, layered.node(node).order ?? 0]));
      const successors = new Map(layered.nodes().map((node) => [node, layered.successors(node) ?? []]));
      const ranks = new Map<number, string[]>();
      for (const node of layered.nodes()) {
        const rank = layered.node(node).rank ?? 0;
        ranks.set(rank, [...(ranks.get(rank) ?? []), node]);
      }
      for (const nodes of ranks.values()) {
        nodes.sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0));
        counted += crossingsBetween(nodes, successors, position);
      }
    },
  });
  return counted;
}

describe('orderLayers', () => {
  it.each([
    ['layered', layered],
    ['tangled', tangled],
  ])('crosses the arrows of a large graph (%s) no more than dagre does', (_, make) => {
    const shape = make();
    expect(layerCrossings(shape, orderLayers)).toBeLessThanOrEqual(layerCrossings(shape));
  });
});

describe('layOutGraph', () => {
  it('places every node of a large graph, and routes every arrow', () => {
    const shape = tangled();
    const layout = layOutGraph(shape);
    expect(Object.keys(layout.nodes).sort()).toEqual([...shape.nodes].sort());
    expect(layout.edges.map((edge) => `${edge.from} ${edge.to}`).sort()).toEqual(
      shape.edges.map(([from, to]) => `${from} ${to}`).sort(),
    );
    for (const edge of layout.edges) expect(edge.points.length).toBeGreaterThanOrEqual(2);
  });

  it('draws a large graph that can be drawn without crossings without any', () => {
    expect(drawnCrossings(layOutGraph(fan()).edges.map((edge) => edge.points))).toBe(0);
  });

  it('places every task right of the tasks it waits for, in small and large graphs', () => {
    const small: GraphShape = {
      nodes: ['a', 'b', 'c'],
      edges: [
        ['a', 'b'],
        ['a', 'c'],
        ['b', 'c'],
      ],
    };
    for (const shape of [small, layered(), tangled(), fan()]) {
      const { nodes } = layOutGraph(shape);
      for (const [from, to] of shape.edges) expect(nodes[to]?.x).toBeGreaterThan(nodes[from]?.x ?? 0);
    }
  });
});

describe('crossingsBetween', () => {
  // Nodes a, b, c of one rank (in that order) and x, y, z of the next.
  const position = new Map(['a', 'b', 'c', 'x', 'y', 'z'].map((node, i) => [node, i % 3]));
  it.each([
    ['parallel arrows', { a: ['x'], b: ['y'], c: ['z'] }, 0],
    ['one pair swapped', { a: ['y'], b: ['x'], c: ['z'] }, 1],
    ['all reversed', { a: ['z'], b: ['y'], c: ['x'] }, 3],
    ['a fan out and a fan in', { a: ['x', 'y', 'z'], b: ['z'], c: ['z'] }, 0],
    ['two fans across', { a: ['y', 'z'], b: ['x'], c: [] }, 2],
    ['no arrow', { a: [], b: [], c: [] }, 0],
  ])('counts %s', (_, arrows, expected) => {
    expect(crossingsBetween(['a', 'b', 'c'], new Map(Object.entries(arrows)), position)).toBe(expected);
  });
});
