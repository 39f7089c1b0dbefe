import type { EdgeLabel, GraphLabel, graphlib, NodeLabel } from '@dagrejs/dagre';

type LayeredGraph = graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>;

/** Down and up passes of the barycenter heuristic; the order with the fewest crossings is kept. */
const SWEEPS = 8;

/**
 * Orders the nodes of each rank of a graph dagre has ranked (every edge spans one rank then:
 * longer ones go through dummy nodes), to uncross the edges: the classic barycenter heuristic,
 * a fixed number of sweeps from a depth-first first order, each followed by swaps of neighbours
 * (dot's "transpose"). It stands in for dagre's own ordering (through its `customOrder` option),
 * whose bookkeeping is 60% of the layout of a 200-task pipeline, and which leaves at least as
 * many crossings on the graphs of apps/web/test/graph-layout.test.ts.
 */
export function orderLayers(graph: LayeredGraph): void {
  const rankOf = (node: string) => graph.node(node).rank ?? 0;
  const layers: string[][] = [];
  const visited = new Set<string>();
  // First order: depth first from the nodes in rank order, so that a chain starts aligned.
  const visit = (node: string) => {
    if (visited.has(node)) return;
    visited.add(node);
    let layer = layers[rankOf(node)];
    if (!layer) {
      layer = [];
      layers[rankOf(node)] = layer;
    }
    layer.push(node);
    for (const next of graph.successors(node) ?? []) visit(next);
  };
  for (const node of [...graph.nodes()].sort((a, b) => rankOf(a) - rankOf(b))) visit(node);
  const ranks = Array.from(layers, (layer) => layer ?? []);

  const position = new Map<string, number>();
  const place = (layer: string[]) => {
    for (const [index, node] of layer.entries()) position.set(node, index);
  };
  for (const layer of ranks) place(layer);
  const predecessors = new Map(graph.nodes().map((node) => [node, graph.predecessors(node) ?? []]));
  const successors = new Map(graph.nodes().map((node) => [node, graph.successors(node) ?? []]));

  /** Sorts a rank by the mean position of its neighbours in the rank just ordered. */
  const sortByNeighbours = (layer: string[], neighbours: Map<string, string[]>) => {
    const centre = new Map<string, number>();
    for (const node of layer) {
      const around = neighbours.get(node) ?? [];
      const sum = around.reduce((total, other) => total + (position.get(other) ?? 0), 0);
      // A node with no neighbour there keeps its place.
      centre.set(node, around.length > 0 ? sum / around.length : (position.get(node) ?? 0));
    }
    layer.sort((a, b) => (centre.get(a) ?? 0) - (centre.get(b) ?? 0));
    place(layer);
  };

  /** Crossings of the arrows of u with those of v, on both sides, when u is left of v. */
  const pairCost = (u: string, v: string) => {
    let cost = 0;
    for (const side of [predecessors, successors]) {
      for (const a of side.get(u) ?? [])
        for (const b of side.get(v) ?? []) if ((position.get(a) ?? 0) > (position.get(b) ?? 0)) cost += 1;
    }
    return cost;
  };
  /** Swaps neighbours of a rank while that uncrosses arrows (dot's "transpose"), 4 passes at most. */
  const transpose = () => {
    for (let pass = 0; pass < 4; pass += 1) {
      let improved = false;
      for (const layer of ranks) {
        for (let i = 0; i + 1 < layer.length; i += 1) {
          const u = layer[i] as string;
          const v = layer[i + 1] as string;
          if (pairCost(v, u) < pairCost(u, v)) {
            layer[i] = v;
            layer[i + 1] = u;
            position.set(v, i);
            position.set(u, i + 1);
            improved = true;
          }
        }
      }
      if (!improved) break;
    }
  };

  const crossings = () => {
    let total = 0;
    for (let rank = 0; rank + 1 < ranks.length; rank += 1)
      total += crossingsBetween(ranks[rank] ?? [], successors, position);
    return total;
  };

  let best = ranks.map((layer) => [...layer]);
  let fewest = crossings();
  for (let sweep = 0; sweep < SWEEPS && fewest > 0; sweep += 1) {
    if (sweep % 2 === 0) {
      for (let rank = 1; rank < ranks.length; rank += 1) sortByNeighbours(ranks[rank] ?? [], predecessors);
    } else {
      for (let rank = ranks.length - 2; rank >= 0; rank -= 1) sortByNeighbours(ranks[rank] ?? [], successors);
    }
    transpose();
    const count = crossings();
    if (count < fewest) {
      fewest = count;
      best = ranks.map((layer) => [...layer]);
    }
  }
  for (const layer of best) {
    for (const [index, node] of layer.entries()) graph.node(node).order = index;
  }
}

/**
 * How many edges from `layer` to the next rank cross: with the edges sorted by their start, the
 * pairs whose ends come in the other order (counted with a Fenwick tree, in E log V).
 */
export function crossingsBetween(
  layer: string[],
  successors: Map<string, string[]>,
  position: Map<string, number>,
): number {
  const ends: number[] = [];
  for (const node of layer) {
    const targets = (successors.get(node) ?? []).map((next) => position.get(next) ?? 0);
    ends.push(...targets.sort((a, b) => a - b));
  }
  const size = Math.max(0, ...ends) + 1;
  const tree = new Array<number>(size + 1).fill(0);
  let crossings = 0;
  for (const [seen, end] of ends.entries()) {
    // Ends already seen that lie strictly after this one cross its edge.
    let atMost = 0;
    for (let i = end + 1; i > 0; i -= i & -i) atMost += tree[i] ?? 0;
    crossings += seen - atMost;
    for (let i = end + 1; i <= size; i += i & -i) tree[i] = (tree[i] ?? 0) + 1;
  }
  return crossings;
}
