import type { Schemas } from '@pipewright/client';

type StepExecution = Schemas['StepExecution'];

export const withNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);

/** A step as the server's failure messages name it: `step 2 "Build"`, counted from 1. */
export const stepName = (step: StepExecution) =>
  step.label ? `step ${step.index + 1} ${JSON.stringify(step.label)}` : `step ${step.index + 1}`;

/** A heading naming the step and how it ended, then its output. */
export function renderStepOutput(step: StepExecution, withAttempt: boolean): string {
  const ending =
    step.status === 'started'
      ? 'running'
      : `${step.status}${step.exit_code !== undefined ? `, exit status ${step.exit_code}` : ''}`;
  const attempt = withAttempt ? `${step.attempt === 0 ? 'first attempt' : `retry ${step.attempt}`}, ` : '';
  return (
    `--- ${attempt}${stepName(step)}: ${ending} ---\n` +
    withNewline(step.output) +
    (step.output_truncated ? '[output truncated]\n' : '')
  );
}
