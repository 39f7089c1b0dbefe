import type { Schemas } from '@pipewright/types';
import type { Db } from './db.js';

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

export function createOrganizationStore(db: Db) {
  const byId = db.prepare<[string], OrganizationRow>('SELECT * FROM organizations WHERE id = ?');
  const byName = db.prepare<[string], OrganizationRow>('SELECT * FROM organizations WHERE name = ?');
  const insert = db.prepare(
    `INSERT INTO organizations (id, name, creation_time, contact_email_address)
     VALUES (@id, @name, @creation_time, @contact_email_address)`,
  );
  const count = db.prepare<[], { n: number }>(
    'SELECT count(*) AS n FROM (SELECT 1 FROM organizations LIMIT 1)',
  );
  return {
    get(id: string): Organization | undefined {
      const row = byId.get(id);
      return row && toOrganization(row);
    },
    getByName(name: string): Organization | undefined {
      const row = byName.get(name);
      return row && toOrganization(row);
    },
    insert(org: { id: string; name: string; creation_time: string; contact_email_address: string }): void {
      insert.run(org);
    },
    isEmpty(): boolean {
      return count.get()?.n === 0;
    },
  };
}
