import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { QueryBuilder } from './dialect.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type Account = Schemas['Account'];

interface AccountRow {
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

export function createAccountStore(q: QueryBuilder, x: Executor) {
  // The generated types say string where the row holds a role or a date format: narrowed here.
  const accounts = q.selectFrom('accounts').selectAll().$castTo<AccountRow>();
  const byId = prepared(2, (orgId: string, id: string) =>
    accounts.where('org_id', '=', orgId).where('id', '=', id),
  );
  const byEmail = prepared(1, (email: string) => accounts.where('email_address', '=', email));
  const insert = prepared(
    6,
    (
      id: string,
      orgId: string,
      creationTime: string,
      email: string,
      role: Account['role'],
      name: string | null,
    ) =>
      q.insertInto('accounts').values({
        id,
        org_id: orgId,
        creation_time: creationTime,
        email_address: email,
        role,
        name,
      }),
  );
  const setDisabled = prepared(3, (orgId: string, id: string, value: number) =>
    q
      .updateTable('accounts')
      .set({ disabled: value })
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('disabled', '!=', value),
  );
  const touchLogin = prepared(3, (id: string, time: string, staleBefore: string) =>
    q
      .updateTable('accounts')
      .set({ last_login_time: time })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_login_time', 'is', null), eb('last_login_time', '<', staleBefore)])),
  );
  return {
    async get(orgId: string, id: string): Promise<Account | undefined> {
      const row = await x.first(byId(orgId, id));
      return row && toAccount(row);
    },
    async getByEmail(email: string): Promise<Account | undefined> {
      const row = await x.first(byEmail(email));
      return row && toAccount(row);
    },
    async insert(account: NewAccount): Promise<void> {
      await x.run(
        insert(
          account.id,
          account.org_id,
          account.creation_time,
          account.email_address,
          account.role,
          account.name ?? null,
        ),
      );
    },
    /** Disables or enables account `id` of the organization; no write when it already is. */
    async setDisabled(orgId: string, id: string, disabled: boolean): Promise<void> {
      await x.run(setDisabled(orgId, id, disabled ? 1 : 0));
    },
    list(orgId: string, request: PageRequest): Promise<Page<Account>> {
      return paginate<AccountRow, Account>(x, {
        from: q.selectFrom('accounts').where('org_id', '=', orgId),
        sorts: { id: 'id', email_address: 'email_address' },
        request,
        toElement: toAccount,
      });
    },
    /** Records a login at `time` unless one was recorded after `staleBefore`. */
    async touchLogin(id: string, time: string, staleBefore: string): Promise<void> {
      await x.run(touchLogin(id, time, staleBefore));
    },
  };
}
