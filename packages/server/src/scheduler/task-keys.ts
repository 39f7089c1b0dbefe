import { newId } from '../domain/ids.js';
import { formatKey, hashSecret, makeSecret } from '../domain/secrets/api-keys.js';
import type { Tables } from '../store/index.js';

/**
 * Issues the API key an attempt of a task runs with (its steps get it as PIPEWRIGHT_API_KEY), in
 * the caller's transaction: only its hash is stored, and the attempt's end removes it
 * (task-completion.ts). Returns the key, which nothing but the attempt is given.
 */
export async function issueTaskKey(tx: Tables, taskId: string): Promise<string> {
  const keyId = newId();
  const secret = makeSecret();
  await tx.taskKeys.insert(keyId, taskId, hashSecret(secret));
  return formatKey({ kind: 'task', id: keyId, secret });
}
