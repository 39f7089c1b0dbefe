import { type CliOptions, type CliResult, spawnCli } from './cli.js';

// A bound for a hung run only: a loaded machine may take seconds.
const BOUND_MS = 120_000;

/** The program running, watched while it runs. */
export interface LiveCli {
  /** Resolves once its standard output holds `text`; rejects if it ends first, or after a bound. */
  printed(text: string): Promise<void>;
  /** What it printed on its standard output so far. */
  stdout(): string;
  /** Whether it is still running. */
  running(): boolean;
  /** Resolves once it has ended (killed after a bound) to what it printed. */
  ended: Promise<CliResult>;
}

/** Starts the program, for tests that act while it runs: on what it printed so far. */
export function startCli(args: string[], options: CliOptions = {}): LiveCli {
  const child = spawnCli(args, options);
  let stdout = '';
  let stderr = '';
  let exited = false;
  const changed = new Set<() => void>();
  const notify = () => {
    for (const listener of changed) listener();
  };
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    notify();
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? '');
  const ended = new Promise<CliResult>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      exited = true;
      notify();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    printed: (text) =>
      new Promise((resolve, reject) => {
        const finish = (error?: Error) => {
          clearTimeout(timer);
          changed.delete(check);
          if (error) reject(error);
          else resolve();
        };
        const check = () => {
          if (stdout.includes(text)) finish();
          else if (exited)
            finish(
              new Error(`pipewright ${args.join(' ')} ended before printing ${JSON.stringify(text)}:
${stdout}
${stderr}`),
            );
        };
        const timer = setTimeout(
          () =>
            finish(
              new Error(`pipewright ${args.join(' ')} did not print ${JSON.stringify(text)} in time:
${stdout}
${stderr}`),
            ),
          BOUND_MS,
        );
        changed.add(check);
        check();
      }),
    stdout: () => stdout,
    running: () => !exited,
    ended,
  };
}
