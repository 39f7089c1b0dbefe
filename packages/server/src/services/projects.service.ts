import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Principal } from '../domain/principal.js';
import type { Store } from '../store/index.js';
import { requireAdmin } from './auth/permissions.js';

type Project = Schemas['Project'];

function unknownProject(key: string, value: string): DomainError {
  return new DomainError('unknown_project', `no project with ${key} ${value}`, { [key]: value });
}

export function createProjectService(store: Store) {
  const get = (principal: Principal, id: string): Project => {
    const project = store.projects.get(principal.orgId, id);
    if (!project) throw unknownProject('id', id);
    return project;
  };
  return {
    get,
    getByName(principal: Principal, name: string): Project {
      const project = store.projects.getByName(principal.orgId, name);
      if (!project) throw unknownProject('name', name);
      return project;
    },
    list: (principal: Principal, request: PageRequest): Page<Project> =>
      store.projects.list(principal.orgId, request),
    create(principal: Principal, name: string): Project {
      requireAdmin(principal, 'create projects');
      const project = { id: newId(), org_id: principal.orgId, name };
      store.projects.insert(project);
      return project;
    },
    rename(principal: Principal, id: string, name: string): Project {
      requireAdmin(principal, 'rename projects');
      return store.transaction(() => {
        if (!store.projects.rename(principal.orgId, id, name)) throw unknownProject('id', id);
        return get(principal, id);
      });
    },
    delete(principal: Principal, id: string): void {
      requireAdmin(principal, 'delete projects');
      if (!store.projects.delete(principal.orgId, id)) throw unknownProject('id', id);
    },
  };
}
