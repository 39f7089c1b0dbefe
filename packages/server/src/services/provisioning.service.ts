import type { Schemas } from '@pipewright/types';
import { formatKey, hashSecret, makeSecret } from '../domain/api-keys.js';
import { DomainError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { formatTime } from '../domain/time.js';
import type { Store } from '../store/index.js';

type Role = Schemas['Account']['role'];

export const DEFAULT_ORGANIZATION = 'default';
export const DEFAULT_ADMIN_EMAIL = 'admin@localhost';

/**
 * Organizations, accounts and keys are made by the server program (first start and admin
 * commands), not through the API. Each call returns the new key, which is never stored.
 */
export function createProvisioningService(store: Store, clock: () => Date) {
  const issueKey = (accountId: string): string => {
    const id = newId(clock());
    const secret = makeSecret();
    store.apiKeys.insert({
      id,
      account_id: accountId,
      secret_hash: hashSecret(secret),
      creation_time: formatTime(clock()),
    });
    return formatKey({ kind: 'account', id, secret });
  };

  const addAccount = (orgId: string, email: string, role: Role): string => {
    if (store.accounts.getByEmail(email)) {
      throw new DomainError('duplicate_account', `an account with email address ${email} already exists`);
    }
    const id = newId(clock());
    store.accounts.insert({
      id,
      org_id: orgId,
      creation_time: formatTime(clock()),
      email_address: email,
      role,
    });
    return id;
  };

  const createOrganization = (name: string, adminEmail: string): { orgId: string; apiKey: string } =>
    store.transaction(() => {
      if (store.organizations.getByName(name)) {
        throw new DomainError('duplicate_organization', `an organization named ${name} already exists`);
      }
      const orgId = newId(clock());
      store.organizations.insert({
        id: orgId,
        name,
        creation_time: formatTime(clock()),
        contact_email_address: adminEmail,
      });
      return { orgId, apiKey: issueKey(addAccount(orgId, adminEmail, 'admin')) };
    });

  return {
    createOrganization,
    createAccount: (organization: string, email: string, role: Role): string =>
      store.transaction(() => {
        const org = store.organizations.getByName(organization);
        if (!org) throw new DomainError('unknown_organization', `no organization named ${organization}`);
        return issueKey(addAccount(org.id, email, role));
      }),
    createApiKey: (email: string): string =>
      store.transaction(() => {
        const account = store.accounts.getByEmail(email);
        if (!account) throw new DomainError('unknown_account', `no account with email address ${email}`);
        return issueKey(account.id);
      }),
    /** On an empty database, makes the default organization and its admin; else undefined. */
    bootstrap: (): string | undefined =>
      store.transaction(() =>
        store.organizations.isEmpty()
          ? createOrganization(DEFAULT_ORGANIZATION, DEFAULT_ADMIN_EMAIL).apiKey
          : undefined,
      ),
  };
}
