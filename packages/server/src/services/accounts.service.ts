import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { Store } from '../store/index.js';
import { addAccount } from './auth/credentials.js';
import { accountOf, requireAdmin } from './auth/permissions.js';

type Account = Schemas['Account'];

export function createAccountService(store: Store, clock: () => Date) {
  const get = async (principal: Principal, id: string): Promise<Account> => {
    const account = await store.accounts.get(principal.orgId, id);
    if (!account) throw new DomainError('unknown_account', `no account ${id}`, { id });
    return account;
  };
  /** Disables or enables an account; its keys follow from the next request on (auth/auth-cache.ts). */
  const setDisabled = async (principal: Principal, id: string, disabled: boolean): Promise<Account> => {
    requireAdmin(principal, `${disabled ? 'disable' : 'enable'} accounts`);
    // The caller stays an enabled admin, so an organization never locks all its admins out.
    if (disabled && id === accountOf(principal)) {
      throw new DomainError('permission_denied', 'an account cannot disable itself');
    }
    await get(principal, id);
    await store.accounts.setDisabled(principal.orgId, id, disabled);
    return get(principal, id);
  };
  return {
    get,
    getCurrent: async (principal: Principal): Promise<Account> => get(principal, accountOf(principal)),
    list: (principal: Principal, request: PageRequest): Promise<Page<Account>> =>
      store.accounts.list(principal.orgId, request),
    async create(principal: Principal, data: Schemas['AccountData']): Promise<Account> {
      requireAdmin(principal, 'create accounts');
      const id = await store.transaction((tx) =>
        addAccount(tx, clock, {
          orgId: principal.orgId,
          email: data.email_address,
          role: data.role,
          name: data.name,
        }),
      );
      return get(principal, id);
    },
    disable: (principal: Principal, id: string): Promise<Account> => setDisabled(principal, id, true),
    enable: (principal: Principal, id: string): Promise<Account> => setDisabled(principal, id, false),
  };
}
