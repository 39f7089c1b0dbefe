import { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { type KeyParts, parseKey, secretMatches } from '../domain/secrets/api-keys.js';
import { isStorageUnavailable } from '../domain/storage-errors.js';
import { formatTime } from '../domain/time.js';
import type { KeyOwner, Store, TaskKeyOwner } from '../store/index.js';
import { createKeyOwnerCache } from './auth/auth-cache.js';

// last_login_time is written at most once a minute per account, so that a busy key
// does not turn every read into a write.
const LOGIN_RECORD_INTERVAL_MS = 60_000;

const invalidKey = () => new DomainError('invalid_api_key', 'the API key is not valid');

export function createAuthService(store: Store, clock: () => Date) {
  const accountKeys = createKeyOwnerCache<KeyOwner>(store.changeStamp);
  const taskKeys = createKeyOwnerCache<TaskKeyOwner>(store.changeStamp);

  // Key ids are not secret; only the secret's comparison must be constant-time.
  const accountPrincipal = async (parts: KeyParts): Promise<Principal> => {
    const owner = await accountKeys.resolve(parts.id, () => store.apiKeys.findOwner(parts.id));
    if (!owner || !secretMatches(parts.secret, owner.key.secret_hash)) throw invalidKey();
    if (owner.key.revoked || owner.account_disabled || owner.org_disabled) throw invalidKey();
    const now = clock();
    const staleBefore = now.getTime() - LOGIN_RECORD_INTERVAL_MS;
    // Parsing the stored time costs less than formatting one, on every request.
    if (owner.last_login_time === null || Date.parse(owner.last_login_time) < staleBefore) {
      try {
        await store.accounts.touchLogin(owner.account_id, formatTime(now), formatTime(new Date(staleBefore)));
      } catch (error) {
        // Bookkeeping: storage that refuses writes must not refuse reads. It is tried again next time.
        if (!isStorageUnavailable(error)) throw error;
      }
    }
    return { orgId: owner.org_id, keyId: parts.id, accountId: owner.account_id, role: owner.role };
  };

  // A task's key is valid while its task runs, and for its project only.
  const taskPrincipal = async (parts: KeyParts): Promise<Principal> => {
    const owner = await taskKeys.resolve(parts.id, () => store.taskKeys.findOwner(parts.id));
    if (!owner || !secretMatches(parts.secret, owner.secret_hash) || owner.task_status !== 'started') {
      throw invalidKey();
    }
    return { orgId: owner.org_id, keyId: parts.id, role: 'user', projectId: owner.project_id };
  };

  return {
    /** Resolves an API key to its principal, or throws `invalid_api_key`. */
    async authenticate(key: string): Promise<Principal> {
      const parts = parseKey(key);
      if (!parts) throw invalidKey();
      return parts.kind === 'task' ? taskPrincipal(parts) : accountPrincipal(parts);
    },
  };
}
