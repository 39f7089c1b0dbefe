import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { Store, TaskFilters } from '../store/index.js';

type Task = Schemas['Task'];
type Project = Schemas['Project'];

export function createTaskService(store: Store) {
  const get = async (project: Project, id: string): Promise<Task> => {
    const task = await store.tasks.get(project.id, id);
    if (!task) throw new DomainError('unknown_task', `no task ${id}`, { id });
    return task;
  };
  return {
    get,
    list(project: Project, filters: TaskFilters, request: PageRequest): Promise<Page<Task>> {
      return store.tasks.list(project.id, filters, request);
    },
    /** The step executions of every run and attempt of the task (or of one run), with their output so far. */
    async steps(project: Project, id: string, run?: number): Promise<Schemas['StepExecution'][]> {
      return store.stepExecutions.ofTask((await get(project, id)).id, run);
    },
  };
}
