import { ApiError } from '@pipewright/client';
import { type Entry, parseCommandLine } from './command.js';
import { commands } from './commands/commands.js';
import { deploy } from './commands/deploy.js';
import { events } from './commands/events.js';
import { init } from './commands/init.js';
import { login } from './commands/login.js';
import { pipelines } from './commands/pipelines.js';
import { projects } from './commands/projects.js';
import { scratchpad } from './commands/scratchpad.js';
import { tasks } from './commands/tasks.js';
import { type ConnectionFlags, resolveSettings } from './config.js';
import { CliError, UsageError } from './errors.js';
import { createSession, terminalOf } from './session.js';

const ENTRIES: Entry[] = [login, init, projects, deploy, commands, pipelines, tasks, events, scratchpad];

/** The one line an API error becomes: the server's message and its code. */
function describeApiError(error: ApiError): string {
  return `${error.message} (${error.code ?? `HTTP ${error.status}`})`;
}

/** fetch's "fetch failed" says nothing; its cause says what happened. */
function describeNetworkError(error: TypeError, apiUrl: string | undefined): string {
  const cause = error.cause as { code?: string; message?: string } | undefined;
  const reason = cause?.message ?? error.message;
  const certificate = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(cause?.code ?? '');
  return (
    `cannot reach ${apiUrl ?? 'the server'}: ${reason}` +
    (certificate ? ' (use --ca FILE or PIPEWRIGHT_CA_FILE to trust its certificate)' : '')
  );
}

async function main(argv: string[]): Promise<number> {
  let usage: string | undefined;
  let apiUrl: string | undefined;
  try {
    const parsed = parseCommandLine(ENTRIES, argv);
    if (parsed.kind === 'help') {
      process.stdout.write(parsed.text);
      return 0;
    }
    usage = parsed.usage;
    const settings = resolveSettings(parsed.invocation.values as ConnectionFlags, process.env, process.cwd());
    apiUrl = settings.apiUrl;
    const session = createSession(settings, terminalOf(process.stdout), terminalOf(process.stderr));
    return (await parsed.command.run(session, parsed.invocation)) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      const shown = error.usage ?? usage;
      process.stderr.write(`pipewright: ${error.message}\n${shown ? `\n${shown}` : ''}`);
      return 2;
    }
    if (error instanceof ApiError) {
      process.stderr.write(`pipewright: ${describeApiError(error)}\n`);
      return 1;
    }
    if (error instanceof CliError) {
      for (const line of error.details) process.stderr.write(`${line}\n`);
      process.stderr.write(`pipewright: ${error.message}\n`);
      return 1;
    }
    if (error instanceof TypeError && error.message === 'fetch failed') {
      process.stderr.write(`pipewright: ${describeNetworkError(error, apiUrl)}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
