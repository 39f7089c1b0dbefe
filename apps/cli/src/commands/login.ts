import { resolve } from 'node:path';
import type { Command } from '../command.js';
import { configFilePath, type SavedConfig, writeSavedConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { ask, readStdin, stdinIsTerminal } from '../input.js';
import { createSession, projectIdOf } from '../session.js';
import { option } from '../values.js';

export const login: Command = {
  name: 'login',
  summary: 'Check a server URL and API key, and save them for the next commands.',
  details:
    'Takes --api-url, --api-key, --ca and --project, or else PIPEWRIGHT_API_URL,\n' +
    'PIPEWRIGHT_API_KEY and PIPEWRIGHT_CA_FILE; asks on a terminal for what is missing (the\n' +
    'key without echo), or reads the key from standard input when it is not a terminal.\n' +
    'Writes $XDG_CONFIG_HOME/pipewright/config.json (default ~/.config), readable by you\n' +
    'only (0600). Flags, variables and pipewright.json still take precedence over it.',
  arity: [0, 0],
  async run(session, invocation) {
    const env = process.env;
    const terminal = stdinIsTerminal();
    const apiUrl =
      option(invocation, 'api-url') ??
      (env.PIPEWRIGHT_API_URL || (terminal ? await ask('Server URL (without /v0): ') : ''));
    if (!apiUrl) throw new UsageError('login needs the server URL: --api-url URL');
    const apiKey =
      option(invocation, 'api-key') ??
      (env.PIPEWRIGHT_API_KEY ||
        (terminal
          ? await ask('API key: ', { hidden: true })
          : ((await readStdin()).split('\n')[0] ?? '').trim()));
    if (!apiKey) throw new UsageError('login needs an API key: --api-key KEY, or the key on standard input');
    const caGiven = option(invocation, 'ca') ?? (env.PIPEWRIGHT_CA_FILE || undefined);
    const caFile = caGiven ? resolve(caGiven) : undefined;
    const project = option(invocation, 'project');

    // Save only what works: the key must be accepted, the project must exist.
    const checked = createSession({ apiUrl, apiKey, caFile }, session.stdout, session.stderr).client();
    const { data: account } = await checked.GET('/account');
    const { data: organization } = await checked.GET('/org');
    if (project) await projectIdOf(checked, { kind: 'ref', value: project });

    const file = configFilePath(env);
    const config: SavedConfig = {
      api_url: apiUrl,
      api_key: apiKey,
      ...(caFile ? { ca_file: caFile } : {}),
      ...(project ? { project } : {}),
    };
    writeSavedConfig(file, config);
    session.stdout.write(
      `Logged in to ${apiUrl} as ${account?.email_address} (organization ${organization?.name}).\n` +
        `Saved in ${file}.\n`,
    );
    return 0;
  },
};
