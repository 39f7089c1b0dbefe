import type { Schemas } from '@pipewright/types';
import type { QueryBuilder } from './dialect.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type Organization = Schemas['Organization'];

interface OrganizationRow {
  id: string;
  name: string;
  creation_time: string;
  disabled: number;
  address: string;
  postal_code: string;
  city: string;
  country: string;
  contact_email_address: string;
  non_essential_mail_opt_in: number;
  vat_id_number: string | null;
}

function toOrganization(row: OrganizationRow): Organization {
  const { disabled, non_essential_mail_opt_in, vat_id_number, ...rest } = row;
  return {
    ...rest,
    disabled: disabled === 1,
    non_essential_mail_opt_in: non_essential_mail_opt_in === 1,
    ...(vat_id_number === null ? {} : { vat_id_number }),
  };
}

export function createOrganizationStore(q: QueryBuilder, x: Executor) {
  const organizations = q.selectFrom('organizations').selectAll();
  const byId = prepared(1, (id: string) => organizations.where('id', '=', id));
  const byName = prepared(1, (name: string) => organizations.where('name', '=', name));
  const any = prepared(0, () => q.selectFrom('organizations').select('id').limit(1));
  return {
    async get(id: string): Promise<Organization | undefined> {
      const row = await x.first(byId(id));
      return row && toOrganization(row);
    },
    async getByName(name: string): Promise<Organization | undefined> {
      const row = await x.first(byName(name));
      return row && toOrganization(row);
    },
    async insert(org: {
      id: string;
      name: string;
      creation_time: string;
      contact_email_address: string;
    }): Promise<void> {
      await x.run(q.insertInto('organizations').values(org));
    },
    async isEmpty(): Promise<boolean> {
      return (await x.first(any())) === undefined;
    },
  };
}
