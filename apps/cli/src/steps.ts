import type { Schemas } from '@pipewright/client';

type StepExecution = Schemas['StepExecution'];

export const withNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);

/** A step as the server's failure messages name it: `step 2 "Build"`, counted from 1. */
export const stepName = (step: StepExecution) =>
  step.label ? `step ${step.index + 1} ${JSON.stringify(step.label)}` : `step ${step.index + 1}`;

/** A line naming the step (and its attempt) and how it ended, or that it is running. */
export function stepHeading(step: StepExecution, withAttempt: boolean): string {
  const ending =
    step.status === 'started'
      ? 'running'
      : `${step.status}${step.exit_code !== undefined ? `, exit status ${step.exit_code}` : ''}`;
  const attempt = withAttempt ? `${step.attempt === 0 ? 'first attempt' : `retry ${step.attempt}`}, ` : '';
  return `--- ${attempt}${stepName(step)}: ${ending} ---\n`;
}

/** What follows the output of a step whose output the server cut short. */
export const TRUNCATED = '[output truncated]\n';

/** The output of a step, ended by a newline, and whether the server cut it short. */
export const stepBody = (step: StepExecution) =>
  withNewline(step.output) + (step.output_truncated ? TRUNCATED : '');

/** A heading naming the step and how it ended, then its output. */
export const renderStepOutput = (step: StepExecution, withAttempt: boolean) =>
  stepHeading(step, withAttempt) + stepBody(step);

/** Whether the steps are of a task its pipeline's restarts ran more than once: then runs are named. */
export const restarted = (steps: StepExecution[]) => steps.some((step) => step.run > 1);

/**
 * The heading of `steps[i]` in a task's output: its run's, when it is the first of a run and the
 * task has run more than once, then its own.
 */
export function taskOutputHeading(steps: StepExecution[], i: number): string {
  const step = steps[i];
  if (!step) return '';
  const run = restarted(steps) && step.run !== steps[i - 1]?.run ? `=== run ${step.run} ===\n` : '';
  return run + stepHeading(step, true);
}
