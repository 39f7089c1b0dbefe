import type { Schemas } from '@pipewright/client';

export type Status = Schemas['PipelineStatus'] | Schemas['StepExecutionStatus'];

/** Statuses in the order a person looks for them: what failed first, then what runs. */
export const STATUSES: Schemas['PipelineStatus'][] = [
  'failed',
  'started',
  'created',
  'aborted',
  'successful',
];

/** A status as a word in a coloured badge: the colour is never the only sign. */
export function StatusBadge({ status }: { status: Status }) {
  return <span className={`badge status-${status}`}>{status}</span>;
}

/** Whether a pipeline or task in this status can still change by itself. */
export function isActive(status: Status | undefined): boolean {
  return status === 'created' || status === 'started';
}
