import type { Logger } from '../logger.js';
import type { Store } from '../store/index.js';

export interface InstanceLeaseOptions {
  /** This server's name among the servers of the database. */
  instance: string;
  /** How long the lease lasts unrenewed; it is renewed five times as often. */
  leaseMs: number;
  /** Told when the lease is lost or at risk: resolves once this server runs nothing any more. */
  stopRunning(): Promise<void>;
  /** Told after each renewal: the time to look for what other servers left. */
  renewed(): Promise<void>;
}

/**
 * This server's lease on the database (migration 020): the tasks it claims name its instance,
 * and while it renews the lease nobody else touches them. Should a renewal find the lease gone
 * (another server found it expired and ended its tasks), or should renewals fail for three
 * quarters of the lease (the database is out of reach, and others may soon find it expired),
 * the server claims nothing more and stops its running tasks, before the others end their
 * attempts: an attempt never runs on two servers at once. It takes a lease again once it can.
 *
 * The lease's expiry is the database's clock, the three quarters are this process's: the time
 * a renewal is sent comes before the database's time in it, so the server stops its tasks
 * before any other can find its lease expired, whatever the clocks of the machines say.
 */
export function createInstanceLease(
  store: Pick<Store, 'serverInstances'>,
  options: InstanceLeaseOptions,
  logger: Logger,
  monotonicMs: () => number = () => performance.now(),
) {
  const { instance, leaseMs } = options;
  let held = false;
  // When the last renewal that succeeded was sent, on this process's monotonic clock.
  let renewedAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;

  const release = async (why: string) => {
    held = false;
    logger.warn(`${why}: the tasks running here are stopped`, { instance });
    await options.stopRunning();
  };

  const renew = async () => {
    const sent = monotonicMs();
    try {
      if (held && (await store.serverInstances.renew(instance, leaseMs))) {
        renewedAt = sent;
        return;
      }
      if (held) await release('this server lost its lease: another server ended its tasks');
      await store.serverInstances.register(instance, leaseMs);
      renewedAt = sent;
      held = true;
    } catch (error) {
      if (held && monotonicMs() - renewedAt > (leaseMs * 3) / 4) {
        await release(`the lease could not be renewed (${String(error)})`);
      }
      throw error;
    }
  };

  const tick = async () => {
    if (ticking) return;
    ticking = true;
    try {
      await renew();
      await options.renewed();
    } catch (error) {
      logger.error('server instance lease: renewal or look for left tasks failed', { error: String(error) });
    } finally {
      ticking = false;
    }
  };

  return {
    /** Whether this server may claim tasks now. */
    get held(): boolean {
      return held;
    },
    /** Takes the lease (a previous run of this server's, if any, is this one's now). */
    async take(): Promise<void> {
      const sent = monotonicMs();
      await store.serverInstances.register(instance, leaseMs);
      renewedAt = sent;
      held = true;
    },
    /** Renews the lease, then looks for what other servers left: what `start` does every fifth of the lease. */
    tick,
    /** Renews the lease from now on, looking for what other servers left after each renewal. */
    start(): void {
      timer = setInterval(() => void tick(), leaseMs / 5);
      timer.unref();
    },
    /** Renews no more, and gives the lease up: what this server ran has ended, nothing is left to others. */
    async stop(): Promise<void> {
      clearInterval(timer);
      held = false;
      await store.serverInstances.remove(instance).catch((error: unknown) => {
        logger.warn('the lease could not be given up: it expires by itself', { error: String(error) });
      });
    },
  };
}
