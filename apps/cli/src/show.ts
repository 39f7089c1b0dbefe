import type { ApiClient } from '@pipewright/client';
import type { Command } from './command.js';
import { printJson } from './listing.js';
import { JSON_OPTION } from './options.js';
import type { Session } from './session.js';
import { argument, flag } from './values.js';

export interface ShowSpec<T> {
  /** `show` unless given. */
  name?: string;
  /** `ID` unless given: what names the thing shown. */
  args?: string;
  summary: string;
  /** What is shown, for the error when the API answers nothing: `pipeline`. */
  noun: string;
  fetch(client: ApiClient, key: string): Promise<T | undefined>;
  /** Writes it for people; the client reads what goes with it. */
  print(session: Session, client: ApiClient, shown: T): void | Promise<void>;
}

/**
 * A subcommand that shows one thing of the selected project: with --json as the API answers it,
 * else as `print` writes it.
 */
export function showCommand<T>(spec: ShowSpec<T>): Command {
  return {
    name: spec.name ?? 'show',
    args: spec.args ?? 'ID',
    summary: spec.summary,
    arity: [1, 1],
    options: JSON_OPTION,
    async run(session, invocation) {
      const { client } = await session.project();
      const key = argument(invocation, 0);
      const shown = await spec.fetch(client, key);
      if (shown === undefined) throw new Error(`no answer for ${spec.noun} ${key}`);
      if (flag(invocation, 'json')) printJson(session, shown);
      else await spec.print(session, client, shown);
      return 0;
    },
  };
}
