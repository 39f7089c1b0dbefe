// The task graph's layout, off the page's thread: a large graph costs dagre hundreds of
// milliseconds, during which the page stays responsive and shows the rest of the pipeline.
import { layOutGraph } from './graph-layout.js';
import type { LayoutRequest, LayoutResponse } from './graph-shape.js';

/** The worker's global scope, as much of it as is used (the DOM's types describe a window). */
const scope = self as unknown as {
  onmessage: (event: MessageEvent<LayoutRequest>) => void;
  postMessage(response: LayoutResponse): void;
};

scope.onmessage = ({ data: { id, shape } }) => {
  let response: LayoutResponse;
  try {
    response = { id, layout: layOutGraph(shape) };
  } catch (error) {
    response = { id, error: error instanceof Error ? error.message : String(error) };
  }
  scope.postMessage(response);
};
