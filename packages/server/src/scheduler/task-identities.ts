import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Schemas } from '@pipewright/types';
import { type IdentityField, identityGrant } from '../domain/secrets/identities.js';
import { secretsToMask } from '../domain/secrets/output-mask.js';
import type { SecretBox } from '../domain/secrets/secret-box.js';
import { type RevealedIdentity, revealIdentities } from '../services/index.js';
import type { Store } from '../store/index.js';

/** The directory of TMPDIR where the files of identities (SSH keys, known_hosts) are written. */
const IDENTITY_DIR = 'pipewright-identities';

/** The identities a task names, with their values; or why it cannot have them. */
export type TaskIdentities = { identities: RevealedIdentity[] } | { problem: string };

const NONE: TaskIdentities = { identities: [] };

/**
 * Reads and opens the identities `task` names, in its project. Never throws: a failure is the
 * task's, which fails at its start with the problem.
 */
export async function readTaskIdentities(
  store: Store,
  secrets: SecretBox,
  task: Schemas['Task'],
  project: Schemas['Project'] | undefined,
): Promise<TaskIdentities> {
  if (task.task_identities.length === 0 || !project) return NONE;
  try {
    return await revealIdentities(store, secrets, project, task.task_identities);
  } catch (error) {
    return { problem: `the identities of the task cannot be read: ${String(error)}` };
  }
}

/** Every value the task holds, to mask in the output of its steps. */
export function maskedValues(named: TaskIdentities): string[] {
  if ('problem' in named) return [];
  return secretsToMask(named.identities.flatMap((identity) => Object.values(identity.values)));
}

const fileIn = (tmpDir: string, name: string) => (field: IdentityField) =>
  join(tmpDir, IDENTITY_DIR, `${name}.${field}`);

/**
 * The variables the identities give the steps (see IdentityKind in the spec), their files in
 * `tmpDir`, the task's TMPDIR as its steps see it (in a container, where it is mounted).
 */
export function identityEnvironment(
  identities: readonly RevealedIdentity[],
  tmpDir: string,
): Record<string, string> {
  return Object.assign({}, ...identities.map((i) => identityGrant(i, fileIn(tmpDir, i.name)).environment));
}

/**
 * Writes the files of the identities into `tmpDir` (the attempt's, new and empty), readable by
 * the task's user only: a directory of mode 0700 and files of mode 0600, theirs. They go with
 * the attempt's TMPDIR when it ends.
 */
export function writeIdentityFiles(
  identities: readonly RevealedIdentity[],
  tmpDir: string,
  user: { uid: number; gid: number } | undefined,
): void {
  const files = identities.flatMap((i) => identityGrant(i, fileIn(tmpDir, i.name)).files);
  if (files.length === 0) return;
  const dir = join(tmpDir, IDENTITY_DIR);
  mkdirSync(dir, { mode: 0o700 });
  if (user) chownSync(dir, user.uid, user.gid);
  for (const { path, content } of files) {
    writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
    if (user) chownSync(path, user.uid, user.gid);
  }
}
