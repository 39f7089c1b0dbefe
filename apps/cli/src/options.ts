import type { ParseArgsConfig } from 'node:util';

/** An option of a command, with what its help says about it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Placeholder of the value in the help, for string options: `ID`, `FILE`. */
  value?: string;
  description: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

/** Options every command accepts: where the server is, who calls it, which project. */
export const GLOBAL_OPTIONS: OptionSpecs = {
  'api-url': { type: 'string', value: 'URL', description: 'server URL, without /v0 (PIPEWRIGHT_API_URL)' },
  'api-key': { type: 'string', value: 'KEY', description: 'API key (PIPEWRIGHT_API_KEY)' },
  project: {
    type: 'string',
    short: 'p',
    value: 'NAME|ID',
    description: 'project (PIPEWRIGHT_PROJECT_ID, PIPEWRIGHT_PROJECT_NAME, pipewright.json)',
  },
  ca: { type: 'string', value: 'FILE', description: 'PEM certificate to trust (PIPEWRIGHT_CA_FILE)' },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

export const JSON_OPTION: OptionSpecs = {
  json: { type: 'boolean', description: 'print the raw JSON answer of the API' },
};

/** For what cannot be undone: asked on a terminal, required otherwise (input.ts, confirmedOrYes). */
export const YES_OPTION: OptionSpecs = {
  yes: { type: 'boolean', short: 'y', description: 'go on without asking' },
};

/** The filter of the lists of pipelines and tasks by their status. */
export const STATUS_OPTION: OptionSpecs = {
  status: {
    type: 'string',
    value: 'STATUS',
    description: 'created, started, successful, failed or aborted',
  },
};

export const LIST_OPTIONS: OptionSpecs = {
  ...JSON_OPTION,
  all: { type: 'boolean', description: 'walk every page (default: the first page)' },
};

export function toParseArgs(specs: OptionSpecs): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [
      name,
      spec.short ? { type: spec.type, short: spec.short } : { type: spec.type },
    ]),
  );
}

/** The option lines of a help text, aligned. */
export function describeOptions(specs: OptionSpecs): string {
  const lines = Object.entries(specs).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.value ? ` ${spec.value}` : ''}`;
    return [flag, spec.description] as const;
  });
  const width = Math.max(...lines.map(([flag]) => flag.length));
  return lines.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}\n`).join('');
}
