import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { Store } from '../store/index.js';
import { addAccount } from './auth/credentials.js';
import { accountOf, requireAdmin } from './auth/permissions.js';

type Account = Schemas['Account'];

export function createAccountService(store: Store, clock: () => Date) {
  const get = (principal: Principal, id: string): Account => {
    const account = store.accounts.get(principal.orgId, id);
    if (!account) throw new DomainError('unknown_account', `no account ${id}`, { id });
    return account;
  };
  /** Disables or enables an account; its keys follow from the next request on (auth/auth-cache.ts). */
  const setDisabled = (principal: Principal, id: string, disabled: boolean): Account => {
    requireAdmin(principal, `${disabled ? 'disable' : 'enable'} accounts`);
    // The caller stays an enabled admin, so an organization never locks all its admins out.
    if (disabled && id === accountOf(principal)) {
      throw new DomainError('permission_denied', 'an account cannot disable itself');
    }
    get(principal, id);
    store.accounts.setDisabled(principal.orgId, id, disabled);
    return get(principal, id);
  };
  return {
    get,
    getCurrent: (principal: Principal): Account => get(principal, accountOf(principal)),
    list: (principal: Principal, request: PageRequest): Page<Account> =>
      store.accounts.list(principal.orgId, request),
    create(principal: Principal, data: Schemas['AccountData']): Account {
      requireAdmin(principal, 'create accounts');
      const id = store.transaction(() =>
        addAccount(store, clock, {
          orgId: principal.orgId,
          email: data.email_address,
          role: data.role,
          name: data.name,
        }),
      );
      return get(principal, id);
    },
    disable: (principal: Principal, id: string): Account => setDisabled(principal, id, true),
    enable: (principal: Principal, id: string): Account => setDisabled(principal, id, false),
  };
}
