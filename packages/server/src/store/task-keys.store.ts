import type { QueryBuilder } from './dialect.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

export interface TaskKeyOwner {
  secret_hash: Buffer;
  org_id: string;
  project_id: string;
  task_status: string;
}

export function createTaskKeyStore(q: QueryBuilder, x: Executor) {
  const insert = prepared(3, (id: string, taskId: string, secretHash: Buffer) =>
    q.insertInto('task_keys').values({ id, task_id: taskId, secret_hash: secretHash }),
  );
  const owner = prepared(1, (id: string) =>
    q
      .selectFrom('task_keys as k')
      .innerJoin('tasks as t', 't.id', 'k.task_id')
      .select(['k.secret_hash', 't.org_id', 't.project_id', 't.status as task_status'])
      .where('k.id', '=', id),
  );
  return {
    async insert(id: string, taskId: string, secretHash: Buffer): Promise<void> {
      await x.run(insert(id, taskId, secretHash));
    },
    findOwner(id: string): Promise<TaskKeyOwner | undefined> {
      return x.first(owner(id));
    },
  };
}
