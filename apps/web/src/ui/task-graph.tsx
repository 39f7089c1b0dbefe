import dagre from '@dagrejs/dagre';
import type { Schemas } from '@pipewright/client';
import { useMemo } from 'react';
import { useLocation } from 'wouter';

type Task = Schemas['Task'];

const NODE_WIDTH = 168;
const NODE_HEIGHT = 46;

/** The label of a task in the graph: its entry name, and its instance when the entry has several. */
export function taskLabel(task: Task, tasks: Task[]): string {
  const instances = tasks.filter((t) => t.name === task.name).length;
  return instances > 1 ? `${task.name} #${task.instance_id}` : task.name;
}

/**
 * The tasks of a pipeline as a graph laid out left to right by dagre: an arrow from each task
 * to the tasks that wait for it, every instance of an entry a node of its own, coloured by
 * status (and the status written in it). Each node is a link to the task's page.
 */
export function TaskGraph({ tasks, taskPath }: { tasks: Task[]; taskPath: (id: string) => string }) {
  const [, navigate] = useLocation();
  const layout = useMemo(() => {
    const graph = new dagre.graphlib.Graph();
    graph.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 48, marginx: 4, marginy: 4 });
    graph.setDefaultEdgeLabel(() => ({}));
    for (const task of tasks) graph.setNode(task.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
    for (const task of tasks) {
      for (const dependency of task.dependencies) {
        for (const before of tasks.filter((t) => t.name === dependency)) graph.setEdge(before.id, task.id);
      }
    }
    dagre.layout(graph);
    const size = graph.graph();
    return {
      width: Math.max(size.width ?? 0, NODE_WIDTH),
      height: Math.max(size.height ?? 0, NODE_HEIGHT),
      nodes: tasks.map((task) => ({ task, ...graph.node(task.id) })),
      edges: graph
        .edges()
        .map((edge) => ({ key: `${edge.v}-${edge.w}`, points: graph.edge(edge).points ?? [] })),
    };
  }, [tasks]);
  return (
    <figure className="graph-scroll" aria-label="Task graph">
      <svg
        className="task-graph"
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        width={layout.width}
        height={layout.height}
      >
        <title>Tasks and their dependencies</title>
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" className="arrow-head" />
          </marker>
        </defs>
        {layout.edges.map((edge) => (
          <polyline
            key={edge.key}
            className="edge"
            markerEnd="url(#arrow)"
            points={edge.points.map((p: { x: number; y: number }) => `${p.x},${p.y}`).join(' ')}
          />
        ))}
        {layout.nodes.map(({ task, x, y }) => {
          const href = taskPath(task.id);
          const label = taskLabel(task, tasks);
          const state = `${task.status}${task.retry > 0 ? ` · retry ${task.retry}` : ''}`;
          return (
            <a
              key={task.id}
              href={href}
              className={`node status-${task.status}`}
              data-task={label}
              data-status={task.status}
              onClick={(event) => {
                event.preventDefault();
                navigate(href);
              }}
            >
              <rect
                x={x - NODE_WIDTH / 2}
                y={y - NODE_HEIGHT / 2}
                width={NODE_WIDTH}
                height={NODE_HEIGHT}
                rx="6"
              />
              {/* One text, the two lines as tspans: its accessible name reads "build successful". */}
              <text textAnchor="middle">
                <tspan x={x} y={y - 4} className="node-name">
                  {label.length > 22 ? `${label.slice(0, 21)}…` : label}
                </tspan>{' '}
                <tspan x={x} y={y + 13} className="node-status">
                  {state}
                </tspan>
              </text>
            </a>
          );
        })}
      </svg>
    </figure>
  );
}
