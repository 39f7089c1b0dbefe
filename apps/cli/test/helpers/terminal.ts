import { CLI_BIN, type CliOptions, type CliResult, collectRun, spawnInHome } from './cli.js';

const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * Runs the program on a pseudo-terminal (util-linux's `script`, part of every Debian system), as
 * a person at a terminal would: standard input is a terminal, fed `input`. What the program
 * writes to its stdout and stderr both arrive in `stdout`, with the terminal's echo and escapes.
 */
export function runCliOnTerminal(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const command = `exec ${[process.execPath, CLI_BIN, ...args].map(quoted).join(' ')}`;
  const child = spawnInHome('script', ['--quiet', '--return', '--command', command, '/dev/null'], options);
  return collectRun(child, `pipewright ${args.join(' ')} on a terminal`, options.input);
}
