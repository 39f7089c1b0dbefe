import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { CLI_BIN, type CliOptions, type CliResult, temporaryHome } from './cli.js';

const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * Runs the program on a pseudo-terminal (util-linux's `script`, part of every Debian system), as
 * a person at a terminal would: standard input is a terminal, fed `input`. What the program
 * writes to its stdout and stderr both arrive in `stdout`, with the terminal's echo and escapes.
 */
export function runCliOnTerminal(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const home = temporaryHome();
  const command = `exec ${[process.execPath, CLI_BIN, ...args].map(quoted).join(' ')}`;
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    cwd: options.cwd ?? home,
    env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`pipewright ${args.join(' ')} on a terminal did not end in time:\n${stdout}\n${stderr}`),
      );
    }, 120_000); // a hung run only: a loaded machine may take seconds
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
