import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { Store } from '../store/index.js';

type Account = Schemas['Account'];

export function createAccountService(store: Store) {
  const get = (principal: Principal, id: string): Account => {
    const account = store.accounts.get(principal.orgId, id);
    if (!account) throw new DomainError('unknown_account', `no account ${id}`, { id });
    return account;
  };
  return {
    get,
    getCurrent(principal: Principal): Account {
      if (!principal.accountId)
        throw new DomainError('permission_denied', 'the key of a task has no account');
      return get(principal, principal.accountId);
    },
    list: (principal: Principal, request: PageRequest): Page<Account> =>
      store.accounts.list(principal.orgId, request),
  };
}
