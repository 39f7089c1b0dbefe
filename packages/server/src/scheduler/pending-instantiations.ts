import type { Logger } from '../logger.js';
import { completeInstantiations } from '../services/index.js';
import type { Store } from '../store/index.js';

/**
 * What writes the rest of the tasks of pipelines left half created by a crash, or by a failure of
 * the request that made them (services/intake/instantiation.ts): one completion at a time, in the
 * background, then `onCompleted` (their tasks may run). Each call looks for such pipelines.
 */
export function createPendingInstantiations(store: Store, logger: Logger, onCompleted: () => void) {
  let completing = false;
  return function completePendingInstantiations(): void {
    if (completing) return;
    const pending = store.pipelines.pendingInstantiationIds();
    if (pending.length === 0) return;
    completing = true;
    completeInstantiations(store, pending)
      .then(onCompleted, (error: unknown) =>
        logger.error('failed to create the tasks of a pipeline', { error: String(error) }),
      )
      .finally(() => {
        completing = false;
      });
  };
}
