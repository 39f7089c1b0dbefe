/** An entry of a pipeline as the dependency graph sees it. */
export interface DependencyNode {
  name: string;
  dependencies: readonly string[];
}

/**
 * A dependency that closes a cycle: `nodes[node].dependencies[dependency]`, and the cycle
 * read from that node along its dependencies back to itself (`["a", "b", "a"]`).
 */
export interface Cycle {
  node: number;
  dependency: number;
  path: string[];
}

const UNSEEN = 0;
const ON_PATH = 1;
const DONE = 2;

/**
 * The dependencies that close cycles, found by a depth-first walk in the order of the
 * nodes: removing them all leaves no cycle, and each cycle is reported once. Dependencies
 * on unknown names are not edges (another rule reports them); a repeated name designates
 * its first node. The walk keeps its own stack, so long chains cannot overflow the call stack.
 */
export function findCycles(nodes: readonly DependencyNode[]): Cycle[] {
  const indexOf = new Map<string, number>();
  nodes.forEach((node, index) => {
    if (!indexOf.has(node.name)) indexOf.set(node.name, index);
  });
  const state = nodes.map(() => UNSEEN);
  const cycles: Cycle[] = [];

  for (let root = 0; root < nodes.length; root += 1) {
    if (state[root] !== UNSEEN) continue;
    // Each frame: a node on the current path and the next of its dependencies to follow.
    const path: { node: number; next: number }[] = [{ node: root, next: 0 }];
    state[root] = ON_PATH;
    while (path.length > 0) {
      const frame = path[path.length - 1] as { node: number; next: number };
      const dependencies = (nodes[frame.node] as DependencyNode).dependencies;
      if (frame.next === dependencies.length) {
        state[frame.node] = DONE;
        path.pop();
        continue;
      }
      const dependency = frame.next;
      frame.next += 1;
      const target = indexOf.get(dependencies[dependency] as string);
      if (target === undefined) continue;
      if (state[target] === ON_PATH) {
        const start = path.findIndex((f) => f.node === target);
        const loop = path.slice(start).map((f) => (nodes[f.node] as DependencyNode).name);
        // Read from the node holding the closing dependency: a -> (target ... a).
        cycles.push({ node: frame.node, dependency, path: [loop[loop.length - 1] as string, ...loop] });
      } else if (state[target] === UNSEEN) {
        state[target] = ON_PATH;
        path.push({ node: target, next: 0 });
      }
    }
  }
  return cycles;
}
