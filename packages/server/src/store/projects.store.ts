import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { QueryBuilder } from './dialect.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
import { type Executor, isUniqueViolation } from './sql.js';

type Project = Schemas['Project'];

function duplicateName(name: string): DomainError {
  return new DomainError('duplicate_project_name', `a project named "${name}" already exists`, { name });
}

export function createProjectStore(q: QueryBuilder, x: Executor) {
  const projects = q.selectFrom('projects');
  const byId = prepared(2, (orgId: string, id: string) =>
    projects.selectAll().where('org_id', '=', orgId).where('id', '=', id),
  );
  const byName = prepared(2, (orgId: string, name: string) =>
    projects.selectAll().where('org_id', '=', orgId).where('name', '=', name),
  );
  const insert = prepared(3, (id: string, orgId: string, name: string) =>
    q.insertInto('projects').values({ id, org_id: orgId, name }),
  );
  const rename = prepared(3, (orgId: string, id: string, name: string) =>
    q.updateTable('projects').set({ name }).where('org_id', '=', orgId).where('id', '=', id),
  );
  const remove = prepared(2, (orgId: string, id: string) =>
    q.deleteFrom('projects').where('org_id', '=', orgId).where('id', '=', id),
  );
  return {
    get(orgId: string, id: string): Promise<Project | undefined> {
      return x.first(byId(orgId, id));
    },
    getByName(orgId: string, name: string): Promise<Project | undefined> {
      return x.first(byName(orgId, name));
    },
    async insert(project: Project): Promise<void> {
      try {
        await x.run(insert(project.id, project.org_id, project.name));
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicateName(project.name);
        throw error;
      }
    },
    /** Returns false when no such project exists in the organization. */
    async rename(orgId: string, id: string, name: string): Promise<boolean> {
      try {
        const { changes } = await x.run(rename(orgId, id, name));
        return changes === 1;
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicateName(name);
        throw error;
      }
    },
    /** Deletes the project and, through foreign keys, everything in it. */
    async delete(orgId: string, id: string): Promise<boolean> {
      const { changes } = await x.run(remove(orgId, id));
      return changes === 1;
    },
    list(orgId: string, request: PageRequest): Promise<Page<Project>> {
      return paginate<Project, Project>(x, {
        from: projects.where('org_id', '=', orgId),
        sorts: { id: 'id', name: 'name' },
        request,
        toElement: (row) => row,
      });
    },
  };
}
