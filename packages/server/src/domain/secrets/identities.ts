import type { Schemas } from '@pipewright/types';
import type { JsvError } from '../errors.js';
import { pointer } from '../json-pointer.js';

export type IdentityKind = Schemas['IdentityKind'];
export type IdentityField = keyof Schemas['IdentityData'];
export type IdentityValues = Partial<Record<IdentityField, string>>;

/** The members of `data` each kind takes, those it needs first. */
const FIELDS: Record<IdentityKind, { required: IdentityField[]; optional: IdentityField[] }> = {
  secret: { required: ['value'], optional: [] },
  username_password: { required: ['username', 'password'], optional: [] },
  api_token: { required: ['token'], optional: [] },
  ssh_key: { required: ['private_key'], optional: ['known_hosts'] },
};

/** What is wrong with `data` for `kind` (the schema has checked each value already). */
export function identityDataProblems(kind: IdentityKind, data: IdentityValues): JsvError[] {
  const { required, optional } = FIELDS[kind];
  const problems: JsvError[] = [];
  for (const field of required) {
    if (data[field] === undefined) {
      problems.push({ pointer: '/data', reason: `an identity of kind ${kind} needs ${field}` });
    }
  }
  for (const field of Object.keys(data) as IdentityField[]) {
    if (!required.includes(field) && !optional.includes(field)) {
      problems.push({
        pointer: pointer('', 'data', field),
        reason: `an identity of kind ${kind} takes no ${field}`,
      });
    }
  }
  return problems;
}

/** The members an identity holds, in the order of its kind. */
export function identityFields(kind: IdentityKind, data: IdentityValues): IdentityField[] {
  const { required, optional } = FIELDS[kind];
  return [...required, ...optional].filter((field) => data[field] !== undefined);
}

/**
 * The start of the names of an identity's variables: its name in capitals, `-` made `_`. Two
 * identities of a project may not share one.
 */
export function variablePrefix(name: string): string {
  return name.toUpperCase().replaceAll('-', '_');
}

/** A file an identity gives the steps: its path, by its variable. */
export interface IdentityFile {
  variable: string;
  field: IdentityField;
}

/** The variables a member gives: its value, or (for the files of an SSH key) its file's path. */
const VARIABLE_OF: Record<IdentityField, string> = {
  value: 'VALUE',
  username: 'USERNAME',
  password: 'PASSWORD',
  token: 'TOKEN',
  private_key: 'PRIVATE_KEY_FILE',
  known_hosts: 'KNOWN_HOSTS_FILE',
};

/** Members given to the steps as files, not as values. */
const FILE_FIELDS: ReadonlySet<IdentityField> = new Set(['private_key', 'known_hosts']);

/** The names of the variables an identity gives the steps, in the order of its members. */
export function identityVariables(
  kind: IdentityKind,
  name: string,
  fields: readonly IdentityField[],
): string[] {
  const prefix = variablePrefix(name);
  const variables = fields.map((field) => `${prefix}_${VARIABLE_OF[field]}`);
  return kind === 'ssh_key' ? [...variables, `${prefix}_SSH_COMMAND`] : variables;
}

/** What a revealed identity gives a task: variables, and files to write where `fileOf` says. */
export interface IdentityGrant {
  environment: Record<string, string>;
  files: { path: string; content: string }[];
}

/**
 * The variables and files of an identity whose values are known. `fileOf` says where the file
 * of a member goes; the task reads it there.
 */
export function identityGrant(
  identity: { name: string; kind: IdentityKind; values: IdentityValues },
  fileOf: (field: IdentityField) => string,
): IdentityGrant {
  const prefix = variablePrefix(identity.name);
  const environment: Record<string, string> = {};
  const files: IdentityGrant['files'] = [];
  for (const field of identityFields(identity.kind, identity.values)) {
    const value = identity.values[field] ?? '';
    const variable = `${prefix}_${VARIABLE_OF[field]}`;
    if (!FILE_FIELDS.has(field)) {
      environment[variable] = value;
      continue;
    }
    const path = fileOf(field);
    // ssh reads neither a key nor a known_hosts line without its end of line.
    files.push({ path, content: value.endsWith('\n') ? value : `${value}\n` });
    environment[variable] = path;
  }
  if (identity.kind === 'ssh_key') {
    const key = environment[`${prefix}_PRIVATE_KEY_FILE`] ?? '';
    const knownHosts = environment[`${prefix}_KNOWN_HOSTS_FILE`];
    environment[`${prefix}_SSH_COMMAND`] = [
      `ssh -i ${shellQuote(key)} -o IdentitiesOnly=yes`,
      ...(knownHosts === undefined
        ? []
        : [`-o UserKnownHostsFile=${shellQuote(knownHosts)} -o StrictHostKeyChecking=yes`]),
    ].join(' ');
  }
  return { environment, files };
}

/** A word the shell reads back as `text` (git runs GIT_SSH_COMMAND through the shell). */
function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./=:-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
