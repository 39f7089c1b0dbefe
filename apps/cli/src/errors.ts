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

/** A failure found on this side (a file that cannot be read, a spec that cannot be inlined): exit status 1. */
export class CliError extends Error {
  override name = 'CliError';
}
