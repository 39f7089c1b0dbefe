import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { formatTime } from '../domain/time.js';
import type { Store } from '../store/index.js';
import { issueApiKey } from './auth/credentials.js';
import { accountOf } from './auth/permissions.js';

type ApiKey = Schemas['ApiKey'];

/**
 * The keys of accounts. An admin manages every key of its organization; a user lists, creates
 * and revokes its own. A revoked key is refused from the next request on: the owner cache of
 * authentication (auth/auth-cache.ts) is emptied by any commit, this revocation included.
 */
export function createApiKeyService(store: Store, clock: () => Date) {
  /** Refuses a user acting on another account's keys. */
  const requireOwnerOrAdmin = (principal: Principal, accountId: string): void => {
    if (principal.role !== 'admin' && accountId !== accountOf(principal)) {
      throw new DomainError('permission_denied', 'a user account can only manage its own API keys');
    }
  };
  const get = async (principal: Principal, id: string): Promise<ApiKey> => {
    const key = await store.apiKeys.get(principal.orgId, id);
    if (!key) throw new DomainError('unknown_api_key', `no API key ${id}`, { id });
    requireOwnerOrAdmin(principal, key.account_id);
    return key;
  };
  return {
    get,
    async list(
      principal: Principal,
      accountId: string | undefined,
      request: PageRequest,
    ): Promise<Page<ApiKey>> {
      const own = accountOf(principal);
      const account = accountId ?? (principal.role === 'admin' ? undefined : own);
      if (account !== undefined) requireOwnerOrAdmin(principal, account);
      return store.apiKeys.list(principal.orgId, account, request);
    },
    async create(
      principal: Principal,
      data: { account_id?: string; name?: string },
    ): Promise<ApiKey & { key: string }> {
      const accountId = data.account_id ?? accountOf(principal);
      requireOwnerOrAdmin(principal, accountId);
      return store.transaction(async (tx) => {
        if (!(await tx.accounts.get(principal.orgId, accountId))) {
          throw new DomainError('unknown_account', `no account ${accountId}`, { id: accountId });
        }
        const { id, key } = await issueApiKey(tx, clock, accountId, data.name);
        return { ...((await tx.apiKeys.get(principal.orgId, id)) as ApiKey), key };
      });
    },
    async revoke(principal: Principal, id: string): Promise<void> {
      await get(principal, id);
      await store.apiKeys.revoke(id, formatTime(clock()));
    },
  };
}
