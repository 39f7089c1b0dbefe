import type { Schemas } from '@pipewright/client';
import { Link } from 'wouter';
import { useProject } from '../api/project.js';
import { StatusBadge } from './status.js';
import { TableScroll } from './table-scroll.js';
import { formatDuration, formatTime } from './time.js';

interface PipelineTableProps {
  pipelines: Schemas['Pipeline'][];
  caption: string;
  /** Ids of the selected rows, when rows can be selected. */
  selected?: Set<string>;
  onSelect?: (id: string, selected: boolean) => void;
}

export function PipelineTable({ pipelines, caption, selected, onSelect }: PipelineTableProps) {
  const { path } = useProject();
  return (
    <TableScroll label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {onSelect && (
              <th scope="col">
                <span className="visually-hidden">Selected</span>
              </th>
            )}
            <th scope="col">Pipeline</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {pipelines.map((pipeline) => (
            <tr key={pipeline.id}>
              {onSelect && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${pipeline.name} ${pipeline.id}`}
                    checked={selected?.has(pipeline.id) ?? false}
                    onChange={(event) => onSelect(pipeline.id, event.target.checked)}
                  />
                </td>
              )}
              <td>
                <Link href={path('pipelines', pipeline.id)}>{pipeline.name}</Link>
                <div className="muted small mono">{pipeline.id}</div>
              </td>
              <td>
                <StatusBadge status={pipeline.status} />
              </td>
              <td className="time">{formatTime(pipeline.creation_time)}</td>
              <td>{formatDuration(pipeline.start_time, pipeline.end_time)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
