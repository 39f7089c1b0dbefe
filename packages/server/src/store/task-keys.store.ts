import type { QueryBuilder } from './dialect.js';
import type { Executor } from './sql.js';

export interface TaskKeyOwner {
  secret_hash: Buffer;
  org_id: string;
  project_id: string;
  task_status: string;
}

export function createTaskKeyStore(q: QueryBuilder, x: Executor) {
  return {
    async insert(id: string, taskId: string, secretHash: Buffer): Promise<void> {
      await x.run(q.insertInto('task_keys').values({ id, task_id: taskId, secret_hash: secretHash }));
    },
    findOwner(id: string): Promise<TaskKeyOwner | undefined> {
      return x.first(
        q
          .selectFrom('task_keys as k')
          .innerJoin('tasks as t', 't.id', 'k.task_id')
          .select(['k.secret_hash', 't.org_id', 't.project_id', 't.status as task_status'])
          .where('k.id', '=', id),
      );
    },
    async removeForTask(taskId: string): Promise<void> {
      await x.run(q.deleteFrom('task_keys').where('task_id', '=', taskId));
    },
  };
}
