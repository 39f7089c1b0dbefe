import type { Logger } from '../logger.js';
import { completeInstantiations } from '../services/index.js';
import type { Store } from '../store/index.js';

/**
 * What writes the rest of the tasks of pipelines left half created by a crash, or by a failure of
 * the request that made them (services/intake/instantiation.ts): one completion at a time, in the
 * background, then `onCompleted` (their tasks may run). A call looks for such pipelines if
 * `intervalMs` have passed since the last look (the first call looks): the scheduler calls at
 * each pass, which every commit that may bring work starts, and a look at each would cost a
 * read per pass for what only a crash or a failed request leaves, and the scheduler's poll
 * finds in time.
 */
export function createPendingInstantiations(
  store: Store,
  logger: Logger,
  onCompleted: () => void,
  intervalMs: number,
) {
  let completing = false;
  let lastLook = Number.NEGATIVE_INFINITY;
  return async function completePendingInstantiations(): Promise<void> {
    if (completing || performance.now() - lastLook < intervalMs) return;
    completing = true;
    lastLook = performance.now();
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
