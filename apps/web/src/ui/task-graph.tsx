import type { Schemas } from '@pipewright/client';
import { useMemo } from 'react';
import { useLocation } from 'wouter';
import { type GraphShape, NODE_HEIGHT, NODE_WIDTH } from './graph-shape.js';
import { ErrorNotice } from './notices.js';
import { useGraphLayout } from './use-graph-layout.js';

type Task = Schemas['Task'];

/** The label of a task in the graph: its entry name, and its instance when the entry has several. */
export function taskLabel(task: Task, tasks: Task[]): string {
  const instances = tasks.filter((t) => t.name === task.name).length;
  return instances > 1 ? `${task.name} #${task.instance_id}` : task.name;
}

/** A node per task, and an arrow from each task to each task that waits for it (every instance). */
function graphShape(tasks: Task[]): GraphShape {
  const byName = new Map<string, string[]>();
  for (const task of tasks) byName.set(task.name, [...(byName.get(task.name) ?? []), task.id]);
  return {
    nodes: tasks.map((task) => task.id),
    edges: tasks.flatMap((task) =>
      task.dependencies.flatMap((dependency) =>
        (byName.get(dependency) ?? []).map((before): [string, string] => [before, task.id]),
      ),
    ),
  };
}

/**
 * The tasks of a pipeline as a graph laid out left to right by dagre: an arrow from each task
 * to the tasks that wait for it, every instance of an entry a node of its own, coloured by
 * status (and the status written in it). Each node is a link to the task's page. The layout is
 * computed in a worker, once per shape: until it comes, the rest of the page is already shown.
 */
export function TaskGraph({ tasks, taskPath }: { tasks: Task[]; taskPath: (id: string) => string }) {
  const [, navigate] = useLocation();
  const shape = useMemo(() => graphShape(tasks), [tasks]);
  const { data: layout, error } = useGraphLayout(shape);
  if (error) return <ErrorNotice error={error} />;
  if (!layout) {
    return (
      <p className="muted" role="status">
        Laying out the graph of {tasks.length} tasks…
      </p>
    );
  }
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
            key={`${edge.from}-${edge.to}`}
            className="edge"
            markerEnd="url(#arrow)"
            points={edge.points.map((p) => `${p.x},${p.y}`).join(' ')}
          />
        ))}
        {tasks.map((task) => {
          // The layout is of these very tasks (a pipeline's tasks are made with it, never added).
          const position = layout.nodes[task.id];
          if (!position) return null;
          const { x, y } = position;
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
