/**
 * What a reliability test measured. Each test prints its figures on one line,
 * `reliability figures {"area": ..., ...}`, which `npm run reliability` (summary.mjs)
 * collects from the output of the whole suite into its summary.
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
  process.stdout.write(`reliability figures ${JSON.stringify({ area, ...figures })}\n`);
}
