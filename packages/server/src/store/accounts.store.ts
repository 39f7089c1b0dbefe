import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

type Account = Schemas['Account'];

interface AccountRow extends Record<string, unknown> {
  id: string;
  org_id: string;
  creation_time: string;
  disabled: number;
  email_address: string;
  name: string | null;
  role: Account['role'];
  last_login_time: string | null;
  last_project_id: string | null;
  date_format: Account['settings']['date_format'];
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    org_id: row.org_id,
    creation_time: row.creation_time,
    disabled: row.disabled === 1,
    email_address: row.email_address,
    ...(row.name === null ? {} : { name: row.name }),
    role: row.role,
    ...(row.last_login_time === null ? {} : { last_login_time: row.last_login_time }),
    ...(row.last_project_id === null ? {} : { last_project_id: row.last_project_id }),
    settings: { date_format: row.date_format },
  };
}

export interface NewAccount {
  id: string;
  org_id: string;
  creation_time: string;
  email_address: string;
  role: Account['role'];
  name?: string | undefined;
}

export function createAccountStore(db: Db) {
  const byId = db.prepare<[string, string], AccountRow>('SELECT * FROM accounts WHERE org_id = ? AND id = ?');
  const byEmail = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE email_address = ?');
  const insert = db.prepare(
    `INSERT INTO accounts (id, org_id, creation_time, email_address, role, name)
     VALUES (@id, @org_id, @creation_time, @email_address, @role, @name)`,
  );
  const setDisabled = db.prepare<{ org_id: string; id: string; disabled: number }>(
    'UPDATE accounts SET disabled = @disabled WHERE org_id = @org_id AND id = @id AND disabled != @disabled',
  );
  const touchLogin = db.prepare(
    `UPDATE accounts SET last_login_time = @time
     WHERE id = @id AND (last_login_time IS NULL OR last_login_time < @stale_before)`,
  );
  return {
    get(orgId: string, id: string): Account | undefined {
      const row = byId.get(orgId, id);
      return row && toAccount(row);
    },
    getByEmail(email: string): Account | undefined {
      const row = byEmail.get(email);
      return row && toAccount(row);
    },
    insert(account: NewAccount): void {
      insert.run({ ...account, name: account.name ?? null });
    },
    /** Disables or enables account `id` of the organization; no write when it already is. */
    setDisabled(orgId: string, id: string, disabled: boolean): void {
      setDisabled.run({ org_id: orgId, id, disabled: disabled ? 1 : 0 });
    },
    list(orgId: string, request: PageRequest): Page<Account> {
      return paginate(db, {
        table: 'accounts',
        where: ['org_id = ?'],
        params: [orgId],
        sorts: { id: 'id', email_address: 'email_address' },
        request,
        toElement: toAccount,
      });
    },
    /** Records a login at `time` unless one was recorded after `staleBefore`. */
    touchLogin(id: string, time: string, staleBefore: string): void {
      touchLogin.run({ id, time, stale_before: staleBefore });
    },
  };
}
