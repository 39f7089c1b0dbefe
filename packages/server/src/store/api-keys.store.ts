import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

type ApiKey = Schemas['ApiKey'];

export interface ApiKeyRow extends Record<string, unknown> {
  id: string;
  org_id: string;
  account_id: string;
  secret_hash: Buffer;
  name: string | null;
  creation_time: string;
  revoked: number;
  revocation_time: string | null;
}

export interface NewApiKeyRow {
  id: string;
  account_id: string;
  secret_hash: Buffer;
  name?: string | undefined;
  creation_time: string;
}

export interface KeyOwner {
  key: ApiKeyRow;
  org_id: string;
  account_id: string;
  role: 'admin' | 'user';
  last_login_time: string | null;
  account_disabled: number;
  org_disabled: number;
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    org_id: row.org_id,
    account_id: row.account_id,
    ...(row.name === null ? {} : { name: row.name }),
    creation_time: row.creation_time,
    revoked: row.revoked === 1,
    ...(row.revocation_time === null ? {} : { revocation_time: row.revocation_time }),
  };
}

export function createApiKeyStore(db: Db) {
  // The organization is the account's (migration 016), copied so that keys list by organization.
  const insert = db.prepare(
    `INSERT INTO api_keys (id, org_id, account_id, secret_hash, name, creation_time)
     VALUES (@id, (SELECT org_id FROM accounts WHERE id = @account_id), @account_id, @secret_hash, @name,
             @creation_time)`,
  );
  const owner = db.prepare<[string], ApiKeyRow & Omit<KeyOwner, 'key'>>(
    `SELECT k.*, a.role, a.last_login_time,
            a.disabled AS account_disabled, o.disabled AS org_disabled
     FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN organizations o ON o.id = a.org_id
     WHERE k.id = ?`,
  );
  const byId = db.prepare<[string, string], ApiKeyRow>('SELECT * FROM api_keys WHERE org_id = ? AND id = ?');
  const revoke = db.prepare<{ id: string; time: string | null }>(
    `UPDATE api_keys SET revoked = 1, revocation_time = coalesce(@time, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
     WHERE id = @id AND revoked = 0`,
  );
  return {
    insert(key: NewApiKeyRow): void {
      insert.run({ ...key, name: key.name ?? null });
    },
    findOwner(id: string): KeyOwner | undefined {
      const row = owner.get(id);
      if (!row) return undefined;
      const { role, last_login_time, account_disabled, org_disabled, ...key } = row;
      return {
        key,
        org_id: key.org_id,
        account_id: key.account_id,
        role,
        last_login_time,
        account_disabled,
        org_disabled,
      };
    },
    get(orgId: string, id: string): ApiKey | undefined {
      const row = byId.get(orgId, id);
      return row && toApiKey(row);
    },
    /** The keys of an organization, or of one of its accounts. */
    list(orgId: string, accountId: string | undefined, request: PageRequest): Page<ApiKey> {
      return paginate(db, {
        table: 'api_keys',
        where: accountId === undefined ? ['org_id = ?'] : ['org_id = ?', 'account_id = ?'],
        params: accountId === undefined ? [orgId] : [orgId, accountId],
        sorts: { id: 'id' },
        request,
        toElement: toApiKey,
      });
    },
    /** Revokes key `id` at `time` (now by default); a revoked key keeps the time of its first revocation. */
    revoke(id: string, time?: string): void {
      revoke.run({ id, time: time ?? null });
    },
  };
}
