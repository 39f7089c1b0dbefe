import type { Schemas } from '@pipewright/types';
import { DomainError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { formatTime } from '../domain/time.js';
import type { Store } from '../store/index.js';
import { addAccount, issueApiKey } from './auth/credentials.js';

type Role = Schemas['Account']['role'];

export const DEFAULT_ORGANIZATION = 'default';
export const DEFAULT_ADMIN_EMAIL = 'admin@localhost';

/**
 * Organizations are made by the server program (first start and admin commands), and so are
 * the first accounts and keys of an organization. Each call returns the new key, which is
 * never stored.
 */
export function createProvisioningService(store: Store, clock: () => Date) {
  const issueKey = (accountId: string): string => issueApiKey(store, clock, accountId).key;

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
      return {
        orgId,
        apiKey: issueKey(addAccount(store, clock, { orgId, email: adminEmail, role: 'admin' })),
      };
    });

  return {
    createOrganization,
    createAccount: (organization: string, email: string, role: Role): string =>
      store.transaction(() => {
        const org = store.organizations.getByName(organization);
        if (!org) throw new DomainError('unknown_organization', `no organization named ${organization}`);
        return issueKey(addAccount(store, clock, { orgId: org.id, email, role }));
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
