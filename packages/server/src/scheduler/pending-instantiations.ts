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
  return async function completePendingInstantiations(): Promise<void> {
    if (completing) return;
    completing = true;
    const done = () => {
      completing = false;
    };
    const pending = await store.pipelines.pendingInstantiationIds().catch((error: unknown) => {
      done();
      throw error;
    });
    if (pending.length === 0) return done();
    // In the background: the pass that looked goes on claiming meanwhile.
    void completeInstantiations(store, pending)
      .then(onCompleted, (error: unknown) =>
        logger.error('failed to create the tasks of a pipeline', { error: String(error) }),
      )
      .finally(done);
  };
}
