/** A mistake in how the program was called: exit status 2, with the usage of the command. */
export class UsageError extends Error {
  override name = 'UsageError';

  /** `usage`: what to show under the message; the command being run supplies it when absent. */
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
  }
}

/**
 * A failure found on this side (a file that cannot be read, a spec that cannot be inlined): exit
 * status 1. `details`, one problem a line (`FILE:LINE:COLUMN: REASON`), are printed as they are
 * before the message, so that editors and scripts can read them.
 */
export class CliError extends Error {
  override name = 'CliError';

  constructor(
    message: string,
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }
}

/** `1 problem`, `3 problems`. */
export const problemCount = (count: number) => (count === 1 ? '1 problem' : `${count} problems`);
