import { appendFileSync } from 'node:fs';

/**
 * What a reliability test measured. Each test prints its figures on one line; when
 * PIPEWRIGHT_RELIABILITY_FIGURES names a file (`npm run reliability` does), they are also
 * appended there as a JSON line, for the summary.
 */
export interface Figures {
  /** Requests sent. */
  requests: number;
  /** Answers with a 5xx status, or no answer at all (a reset, a timeout). */
  failures5xx: number;
  /** Writes answered 2xx that were not found afterwards. */
  writesLost?: number;
  /** Anything else worth a number: clients, seconds, megabytes. */
  [figure: string]: number | undefined;
}

export function recordFigures(area: string, figures: Figures): void {
  const line = JSON.stringify({ area, ...figures });
  process.stdout.write(`reliability figures ${line}\n`);
  const file = process.env.PIPEWRIGHT_RELIABILITY_FIGURES;
  if (file) appendFileSync(file, `${line}\n`);
}
