import type { Page, PageRequest } from '../domain/cursor.js';
import type { IdentityField, IdentityKind } from '../domain/secrets/identities.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

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
export function createIdentityStore(db: Db) {
  const byId = db.prepare<[string, string], IdentityRow>(
    'SELECT * FROM identities WHERE project_id = ? AND id = ?',
  );
  const byName = db.prepare<[string, string], IdentityRow>(
    'SELECT * FROM identities WHERE project_id = ? AND name = ?',
  );
  const byPrefix = db.prepare<[string, string], IdentityRow>(
    'SELECT * FROM identities WHERE project_id = ? AND variable_prefix = ?',
  );
  const insert = db.prepare<IdentityRow>(
    `INSERT INTO identities (id, org_id, project_id, name, variable_prefix, kind, description, fields,
       sealed_values, creation_time, update_time)
     VALUES (@id, @org_id, @project_id, @name, @variable_prefix, @kind, @description, @fields,
       @sealed_values, @creation_time, @update_time)`,
  );
  const replace = db.prepare<IdentityRow>(
    `UPDATE identities SET name = @name, variable_prefix = @variable_prefix, kind = @kind,
       description = @description, fields = @fields, sealed_values = @sealed_values,
       update_time = @update_time
     WHERE project_id = @project_id AND id = @id`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM identities WHERE project_id = ? AND id = ?');
  const keyFingerprint = db.prepare<[], { fingerprint: string }>(
    'SELECT fingerprint FROM identity_key WHERE id = 1',
  );
  const recordFingerprint = db.prepare<[string]>(
    'INSERT INTO identity_key (id, fingerprint) VALUES (1, ?) ON CONFLICT (id) DO NOTHING',
  );
  return {
    get(projectId: string, id: string): IdentityRecord | undefined {
      const row = byId.get(projectId, id);
      return row && toRecord(row);
    },
    getByName(projectId: string, name: string): IdentityRecord | undefined {
      const row = byName.get(projectId, name);
      return row && toRecord(row);
    },
    /** The identity of the project whose variables start with `prefix`, if any. */
    getByVariablePrefix(projectId: string, prefix: string): IdentityRecord | undefined {
      const row = byPrefix.get(projectId, prefix);
      return row && toRecord(row);
    },
    list(projectId: string, request: PageRequest): Page<IdentityRecord> {
      return paginate<IdentityRow, IdentityRecord>(db, {
        table: 'identities',
        where: ['project_id = ?'],
        params: [projectId],
        sorts: { id: 'id', name: 'name' },
        request,
        toElement: toRecord,
      });
    },
    insert(record: IdentityRecord): void {
      insert.run(toRow(record));
    },
    /** Replaces all but the id, the project and the creation time; false if there is no such identity. */
    replace(record: IdentityRecord): boolean {
      return replace.run(toRow(record)).changes > 0;
    },
    delete(projectId: string, id: string): boolean {
      return remove.run(projectId, id).changes > 0;
    },
    /** The fingerprint of the key the identities are sealed under; undefined before any key was adopted. */
    keyFingerprint(): string | undefined {
      return keyFingerprint.get()?.fingerprint;
    },
    /** Records the fingerprint of the key, unless one is recorded already. */
    recordKeyFingerprint(fingerprint: string): void {
      recordFingerprint.run(fingerprint);
    },
  };
}
