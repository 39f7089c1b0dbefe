import type { Db } from './db.js';

export interface TaskKeyOwner {
  secret_hash: Buffer;
  org_id: string;
  project_id: string;
  task_status: string;
}

export function createTaskKeyStore(db: Db) {
  const insert = db.prepare('INSERT INTO task_keys (id, task_id, secret_hash) VALUES (?, ?, ?)');
  const owner = db.prepare<[string], TaskKeyOwner>(
    `SELECT k.secret_hash, t.org_id, t.project_id, t.status AS task_status
     FROM task_keys k JOIN tasks t ON t.id = k.task_id WHERE k.id = ?`,
  );
  const removeForTask = db.prepare('DELETE FROM task_keys WHERE task_id = ?');
  return {
    insert(id: string, taskId: string, secretHash: Buffer): void {
      insert.run(id, taskId, secretHash);
    },
    findOwner(id: string): TaskKeyOwner | undefined {
      return owner.get(id);
    },
    removeForTask(taskId: string): void {
      removeForTask.run(taskId);
    },
  };
}
