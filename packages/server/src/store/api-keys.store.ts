import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Dialect } from './dialect.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type ApiKey = Schemas['ApiKey'];

export interface ApiKeyRow {
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

export function createApiKeyStore(d: Dialect, x: Executor) {
  const { q } = d;
  // The organization is the account's (migration 016), copied so that keys list by organization.
  const insert = prepared(
    5,
    (id: string, accountId: string, secretHash: Buffer, name: string | null, creationTime: string) =>
      q.insertInto('api_keys').values((eb) => ({
        id,
        org_id: eb.selectFrom('accounts').select('org_id').where('id', '=', accountId),
        account_id: accountId,
        secret_hash: secretHash,
        name,
        creation_time: creationTime,
      })),
  );
  const owner = prepared(1, (id: string) =>
    q
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .innerJoin('organizations as o', 'o.id', 'a.org_id')
      .selectAll('k')
      .select(['a.role', 'a.last_login_time', 'a.disabled as account_disabled', 'o.disabled as org_disabled'])
      .where('k.id', '=', id)
      .$castTo<ApiKeyRow & Omit<KeyOwner, 'key'>>(),
  );
  const byId = prepared(2, (orgId: string, id: string) =>
    q
      .selectFrom('api_keys')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .$castTo<ApiKeyRow>(),
  );
  const revoke = prepared(2, (id: string, time: string | null) =>
    q
      .updateTable('api_keys')
      .set((eb) => ({
        revoked: 1,
        revocation_time: eb.fn.coalesce(eb.val(time), d.now),
      }))
      .where('id', '=', id)
      .where('revoked', '=', 0),
  );
  return {
    async insert(key: NewApiKeyRow): Promise<void> {
      await x.run(insert(key.id, key.account_id, key.secret_hash, key.name ?? null, key.creation_time));
    },
    async findOwner(id: string): Promise<KeyOwner | undefined> {
      const row = await x.first(owner(id));
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
    async get(orgId: string, id: string): Promise<ApiKey | undefined> {
      const row = await x.first(byId(orgId, id));
      return row && toApiKey(row);
    },
    /** The keys of an organization, or of one of its accounts. */
    list(orgId: string, accountId: string | undefined, request: PageRequest): Promise<Page<ApiKey>> {
      let from = q.selectFrom('api_keys').where('org_id', '=', orgId);
      if (accountId !== undefined) from = from.where('account_id', '=', accountId);
      return paginate<ApiKeyRow, ApiKey>(x, {
        from,
        sorts: { id: 'id' },
        request,
        toElement: toApiKey,
      });
    },
    /** Revokes key `id` at `time` (now by default); a revoked key keeps the time of its first revocation. */
    async revoke(id: string, time?: string): Promise<void> {
      await x.run(revoke(id, time ?? null));
    },
  };
}
