import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

type Project = Schemas['Project'];

function duplicateName(name: string): DomainError {
  return new DomainError('duplicate_project_name', `a project named "${name}" already exists`, { name });
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export function createProjectStore(db: Db) {
  const byId = db.prepare<[string, string], Project>('SELECT * FROM projects WHERE org_id = ? AND id = ?');
  const byName = db.prepare<[string, string], Project>(
    'SELECT * FROM projects WHERE org_id = ? AND name = ?',
  );
  const insert = db.prepare('INSERT INTO projects (id, org_id, name) VALUES (@id, @org_id, @name)');
  const rename = db.prepare('UPDATE projects SET name = @name WHERE org_id = @org_id AND id = @id');
  const remove = db.prepare('DELETE FROM projects WHERE org_id = ? AND id = ?');
  return {
    get(orgId: string, id: string): Project | undefined {
      return byId.get(orgId, id);
    },
    getByName(orgId: string, name: string): Project | undefined {
      return byName.get(orgId, name);
    },
    insert(project: Project): void {
      try {
        insert.run(project);
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicateName(project.name);
        throw error;
      }
    },
    /** Returns false when no such project exists in the organization. */
    rename(orgId: string, id: string, name: string): boolean {
      try {
        return rename.run({ org_id: orgId, id, name }).changes === 1;
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicateName(name);
        throw error;
      }
    },
    /** Deletes the project and, through foreign keys, everything in it. */
    delete(orgId: string, id: string): boolean {
      return remove.run(orgId, id).changes === 1;
    },
    list(orgId: string, request: PageRequest): Page<Project> {
      return paginate<Project & Record<string, unknown>, Project>(db, {
        table: 'projects',
        where: ['org_id = ?'],
        params: [orgId],
        sorts: { id: 'id', name: 'name' },
        request,
        toElement: (row) => row,
      });
    },
  };
}
