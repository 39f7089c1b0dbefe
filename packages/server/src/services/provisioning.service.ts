import type { Schemas } from '@pipewright/types';
import { DomainError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { formatTime } from '../domain/time.js';
import type { Store, Tables } from '../store/index.js';
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
  const issueKey = async (tx: Tables, accountId: string): Promise<string> =>
    (await issueApiKey(tx, clock, accountId)).key;

  /** Makes the organization and its admin in the transaction `tx`. */
  const addOrganization = async (
    tx: Tables,
    name: string,
    adminEmail: string,
  ): Promise<{ orgId: string; apiKey: string }> => {
    if (await tx.organizations.getByName(name)) {
      throw new DomainError('duplicate_organization', `an organization named ${name} already exists`);
    }
    const orgId = newId(clock());
    await tx.organizations.insert({
      id: orgId,
      name,
      creation_time: formatTime(clock()),
      contact_email_address: adminEmail,
    });
    return {
      orgId,
      apiKey: await issueKey(tx, await addAccount(tx, clock, { orgId, email: adminEmail, role: 'admin' })),
    };
  };

  return {
    createOrganization: (name: string, adminEmail: string): Promise<{ orgId: string; apiKey: string }> =>
      store.transaction((tx) => addOrganization(tx, name, adminEmail)),
    createAccount: (organization: string, email: string, role: Role): Promise<string> =>
      store.transaction(async (tx) => {
        const org = await tx.organizations.getByName(organization);
        if (!org) throw new DomainError('unknown_organization', `no organization named ${organization}`);
        return issueKey(tx, await addAccount(tx, clock, { orgId: org.id, email, role }));
      }),
    createApiKey: (email: string): Promise<string> =>
      store.transaction(async (tx) => {
        const account = await tx.accounts.getByEmail(email);
        if (!account) throw new DomainError('unknown_account', `no account with email address ${email}`);
        return issueKey(tx, account.id);
      }),
    /** On an empty database, makes the default organization and its admin; else undefined. */
    bootstrap: (): Promise<string | undefined> =>
      store.transaction(async (tx) =>
        (await tx.organizations.isEmpty())
          ? (await addOrganization(tx, DEFAULT_ORGANIZATION, DEFAULT_ADMIN_EMAIL)).apiKey
          : undefined,
      ),
  };
}
