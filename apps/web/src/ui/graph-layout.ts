import dagre from '@dagrejs/dagre';
import { type GraphLayout, type GraphShape, NODE_HEIGHT, NODE_WIDTH } from './graph-shape.js';
import { orderLayers } from './layer-order.js';

/**
 * Up to this many nodes, dagre's own ranking (network simplex, which keeps arrows shortest) and
 * ordering cost little. Beyond, they are most of the layout's time (about 500 and 300 ms of the
 * second a 200-task pipeline took on the loaded CI machine): `tight-tree` ranks a pipeline's tasks
 * the same way or nearly in a few milliseconds, and orderLayers orders them in a few tens.
 */
const DAGRE_DEFAULTS_MAX_NODES = 60;

/**
 * Lays a graph out left to right with dagre: the position of each node and the route of each
 * arrow. Pure and synchronous; the page runs it in a worker (graph-layout.worker.ts).
 */
export function layOutGraph(shape: GraphShape): GraphLayout {
  const large = shape.nodes.length > DAGRE_DEFAULTS_MAX_NODES;
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({
    rankdir: 'LR',
    nodesep: 14,
    ranksep: 48,
    marginx: 4,
    marginy: 4,
    ranker: large ? 'tight-tree' : 'network-simplex',
  });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of shape.nodes) graph.setNode(node, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const [from, to] of shape.edges) graph.setEdge(from, to);
  dagre.layout(graph, large ? { customOrder: orderLayers } : {});
  const { width = 0, height = 0 } = graph.graph();
  return {
    width: Math.max(width, NODE_WIDTH),
    height: Math.max(height, NODE_HEIGHT),
    nodes: Object.fromEntries(
      shape.nodes.map((node) => {
        const { x = 0, y = 0 } = graph.node(node);
        return [node, { x, y }];
      }),
    ),
    edges: graph.edges().map(({ v, w }) => ({ from: v, to: w, points: graph.edge(v, w).points ?? [] })),
  };
}
