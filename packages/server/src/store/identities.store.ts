import type { Page, PageRequest } from '../domain/cursor.js';
import type { IdentityField, IdentityKind } from '../domain/secrets/identities.js';
import type { QueryBuilder } from './dialect.js';
import { paginate } from './paginate.js';
import type { Executor } from './sql.js';

/** An identity as stored: its values sealed. */
export interface IdentityRecord {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  variable_prefix: string;
  kind: IdentityKind;
  description: string | null;
  fields: IdentityField[];
  sealed_values: Buffer;
  creation_time: string;
  update_time: string;
}

type IdentityRow = Omit<IdentityRecord, 'fields'> & { fields: string };

function toRecord(row: IdentityRow): IdentityRecord {
  return { ...row, fields: JSON.parse(row.fields) as IdentityField[] };
}

function toRow(record: IdentityRecord): IdentityRow {
  return { ...record, fields: JSON.stringify(record.fields) };
}

/** The identities of projects, and the fingerprint of the key that sealed them. */
export function createIdentityStore(q: QueryBuilder, x: Executor) {
  // The generated types say string where the row holds an identity's kind: narrowed here.
  const identities = q.selectFrom('identities').selectAll().$castTo<IdentityRow>();
  return {
    async get(projectId: string, id: string): Promise<IdentityRecord | undefined> {
      const row = await x.first(identities.where('project_id', '=', projectId).where('id', '=', id));
      return row && toRecord(row);
    },
    async getByName(projectId: string, name: string): Promise<IdentityRecord | undefined> {
      const row = await x.first(identities.where('project_id', '=', projectId).where('name', '=', name));
      return row && toRecord(row);
    },
    /** The identity of the project whose variables start with `prefix`, if any. */
    async getByVariablePrefix(projectId: string, prefix: string): Promise<IdentityRecord | undefined> {
      const row = await x.first(
        identities.where('project_id', '=', projectId).where('variable_prefix', '=', prefix),
      );
      return row && toRecord(row);
    },
    list(projectId: string, request: PageRequest): Promise<Page<IdentityRecord>> {
      return paginate<IdentityRow, IdentityRecord>(x, {
        from: q.selectFrom('identities').where('project_id', '=', projectId),
        sorts: { id: 'id', name: 'name' },
        request,
        toElement: toRecord,
      });
    },
    async insert(record: IdentityRecord): Promise<void> {
      const row = toRow(record);
      await x.run(
        q.insertInto('identities').values({
          id: row.id,
          org_id: row.org_id,
          project_id: row.project_id,
          name: row.name,
          variable_prefix: row.variable_prefix,
          kind: row.kind,
          description: row.description,
          fields: row.fields,
          sealed_values: row.sealed_values,
          creation_time: row.creation_time,
          update_time: row.update_time,
        }),
      );
    },
    /** Replaces all but the id, the project and the creation time; false if there is no such identity. */
    async replace(record: IdentityRecord): Promise<boolean> {
      const row = toRow(record);
      const { changes } = await x.run(
        q
          .updateTable('identities')
          .set({
            name: row.name,
            variable_prefix: row.variable_prefix,
            kind: row.kind,
            description: row.description,
            fields: row.fields,
            sealed_values: row.sealed_values,
            update_time: row.update_time,
          })
          .where('project_id', '=', row.project_id)
          .where('id', '=', row.id),
      );
      return changes > 0;
    },
    async delete(projectId: string, id: string): Promise<boolean> {
      const { changes } = await x.run(
        q.deleteFrom('identities').where('project_id', '=', projectId).where('id', '=', id),
      );
      return changes > 0;
    },
    /** The fingerprint of the key the identities are sealed under; undefined before any key was adopted. */
    async keyFingerprint(): Promise<string | undefined> {
      const row = await x.first(q.selectFrom('identity_key').select('fingerprint').where('id', '=', 1));
      return row?.fingerprint;
    },
    /** Records the fingerprint of the key, unless one is recorded already. */
    async recordKeyFingerprint(fingerprint: string): Promise<void> {
      await x.run(
        q
          .insertInto('identity_key')
          .values({ id: 1, fingerprint })
          .onConflict((oc) => oc.column('id').doNothing()),
      );
    },
  };
}
