// What the task graph's layout takes and gives, shared by the page and the worker that lays it
// out. Nothing here imports the layout library, so the page's bundle does not carry it.

/** The size of a task's box in the graph, in SVG units (pixels at scale 1). */
export const NODE_WIDTH = 168;
export const NODE_HEIGHT = 46;

/** Nodes and arrows (from the task waited for to the task that waits), by task id. */
export interface GraphShape {
  nodes: string[];
  edges: [from: string, to: string][];
}

export interface Point {
  x: number;
  y: number;
}

/** Where everything goes: the centre of each node, the points of each arrow, the overall size. */
export interface GraphLayout {
  width: number;
  height: number;
  nodes: Record<string, Point>;
  edges: { from: string; to: string; points: Point[] }[];
}

/** What the page asks the layout worker, and what the worker answers (with the same id). */
export interface LayoutRequest {
  id: number;
  shape: GraphShape;
}

export type LayoutResponse = { id: number; layout: GraphLayout } | { id: number; error: string };
