import type { Db } from './db.js';

export interface ApiKeyRow {
  id: string;
  account_id: string;
  secret_hash: Buffer;
  creation_time: string;
  revoked: number;
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

export function createApiKeyStore(db: Db) {
  const insert = db.prepare(
    `INSERT INTO api_keys (id, account_id, secret_hash, creation_time)
     VALUES (@id, @account_id, @secret_hash, @creation_time)`,
  );
  const owner = db.prepare<[string], ApiKeyRow & Omit<KeyOwner, 'key'>>(
    `SELECT k.*, a.org_id, a.role, a.last_login_time,
            a.disabled AS account_disabled, o.disabled AS org_disabled
     FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN organizations o ON o.id = a.org_id
     WHERE k.id = ?`,
  );
  const revoke = db.prepare('UPDATE api_keys SET revoked = 1 WHERE id = ?');
  return {
    insert(key: Omit<ApiKeyRow, 'revoked'>): void {
      insert.run(key);
    },
    findOwner(id: string): KeyOwner | undefined {
      const row = owner.get(id);
      if (!row) return undefined;
      const { org_id, role, last_login_time, account_disabled, org_disabled, ...key } = row;
      return {
        key,
        org_id,
        account_id: key.account_id,
        role,
        last_login_time,
        account_disabled,
        org_disabled,
      };
    },
    revoke(id: string): void {
      revoke.run(id);
    },
  };
}
