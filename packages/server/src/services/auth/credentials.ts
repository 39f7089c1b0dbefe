import type { Schemas } from '@pipewright/types';
import { DomainError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { formatKey, hashSecret, makeSecret } from '../../domain/secrets/api-keys.js';
import { formatTime } from '../../domain/time.js';
import type { Tables } from '../../store/index.js';

// Accounts and keys are made by the server program (first start, admin commands) and through
// the API alike: both call these.

export interface NewAccountData {
  orgId: string;
  email: string;
  role: Schemas['Account']['role'];
  name?: string | undefined;
}

/** Adds an account to an organization; email addresses are unique on the server. Returns its id. */
export async function addAccount(
  tables: Tables,
  clock: () => Date,
  account: NewAccountData,
): Promise<string> {
  if (await tables.accounts.getByEmail(account.email)) {
    throw new DomainError(
      'duplicate_account',
      `an account with email address ${account.email} already exists`,
    );
  }
  const id = newId(clock());
  await tables.accounts.insert({
    id,
    org_id: account.orgId,
    creation_time: formatTime(clock()),
    email_address: account.email,
    role: account.role,
    name: account.name,
  });
  return id;
}

/**
 * Makes a key for an account: only the hash of its secret is stored, so the key returned
 * here is the one time anyone sees it.
 */
export async function issueApiKey(
  tables: Tables,
  clock: () => Date,
  accountId: string,
  name?: string,
): Promise<{ id: string; key: string }> {
  const id = newId(clock());
  const secret = makeSecret();
  await tables.apiKeys.insert({
    id,
    account_id: accountId,
    secret_hash: hashSecret(secret),
    name,
    creation_time: formatTime(clock()),
  });
  return { id, key: formatKey({ kind: 'account', id, secret }) };
}
