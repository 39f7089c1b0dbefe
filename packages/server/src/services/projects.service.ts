import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Principal } from '../domain/principal.js';
import type { Store, Tables } from '../store/index.js';
import { requireAdmin } from './auth/permissions.js';

type Project = Schemas['Project'];

function unknownProject(key: string, value: string): DomainError {
  return new DomainError('unknown_project', `no project with ${key} ${value}`, { [key]: value });
}

export function createProjectService(store: Store) {
  /** The project, read through `tables`: those of the transaction, inside one. */
  const get = async (principal: Principal, id: string, tables: Tables = store): Promise<Project> => {
    const project = await tables.projects.get(principal.orgId, id);
    if (!project) throw unknownProject('id', id);
    return project;
  };
  return {
    get,
    async getByName(principal: Principal, name: string): Promise<Project> {
      const project = await store.projects.getByName(principal.orgId, name);
      if (!project) throw unknownProject('name', name);
      return project;
    },
    list: (principal: Principal, request: PageRequest): Promise<Page<Project>> =>
      store.projects.list(principal.orgId, request),
    async create(principal: Principal, name: string): Promise<Project> {
      requireAdmin(principal, 'create projects');
      const project = { id: newId(), org_id: principal.orgId, name };
      await store.projects.insert(project);
      return project;
    },
    async rename(principal: Principal, id: string, name: string): Promise<Project> {
      requireAdmin(principal, 'rename projects');
      return store.transaction(async (tx) => {
        if (!(await tx.projects.rename(principal.orgId, id, name))) throw unknownProject('id', id);
        return get(principal, id, tx);
      });
    },
    async delete(principal: Principal, id: string): Promise<void> {
      requireAdmin(principal, 'delete projects');
      if (!(await store.projects.delete(principal.orgId, id))) throw unknownProject('id', id);
    },
  };
}
