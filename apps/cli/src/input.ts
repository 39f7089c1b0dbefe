import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { UsageError } from './errors.js';

export const stdinIsTerminal = (): boolean => process.stdin.isTTY === true;

/** Everything on standard input, as text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Asks a question on the terminal (the prompt goes to stderr, so that stdout stays for
 * results) and reads one line. `hidden` keeps the answer off the screen, for secrets.
 * Ctrl-C exits with status 130, as a shell would report it.
 */
export async function ask(question: string, options: { hidden?: boolean } = {}): Promise<string> {
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({
    input: process.stdin,
    output: options.hidden ? silent : process.stderr,
    terminal: true,
  });
  lines.on('SIGINT', () => {
    process.stderr.write('\n');
    process.exit(130);
  });
  try {
    if (options.hidden) process.stderr.write(question);
    const answer = await lines.question(options.hidden ? '' : question);
    if (options.hidden) process.stderr.write('\n');
    return answer.trim();
  } finally {
    lines.close();
  }
}

export async function confirm(question: string): Promise<boolean> {
  return /^(y|yes)$/i.test(await ask(`${question} [y/N] `));
}

/**
 * Whether to go on with something that cannot be undone: yes with `--yes`; otherwise the user
 * answers `question` on the terminal. Without a terminal (a script) there is no one to ask:
 * a usage error says that `refusal` needs --yes.
 */
export async function confirmedOrYes(yes: boolean, question: string, refusal: string): Promise<boolean> {
  if (yes) return true;
  if (!stdinIsTerminal()) throw new UsageError(`${refusal} without --yes: no terminal to confirm on`);
  return confirm(question);
}
