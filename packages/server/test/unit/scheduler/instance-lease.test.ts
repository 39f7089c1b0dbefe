import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/logger.js';
import { createInstanceLease } from '../../../src/scheduler/instance-lease.js';

const LEASE_MS = 10_000;

/**
 * A lease over a database of the test's: `answer` says what the next renewal gets (renewed,
 * gone because another server ended the lease, or the database out of reach), on a monotonic
 * clock the test moves.
 */
function leaseWith() {
  const calls: string[] = [];
  const state = { answer: 'renewed' as 'renewed' | 'gone' | 'unreachable', time: 0 };
  const reach = () => {
    if (state.answer === 'unreachable') throw new Error('connection refused');
  };
  const store = {
    serverInstances: {
      async register(id: string) {
        reach();
        calls.push(`register ${id}`);
        state.answer = 'renewed';
      },
      async renew() {
        reach();
        calls.push('renew');
        return state.answer === 'renewed';
      },
      async remove() {},
      async expired() {
        return [];
      },
      async removeExpired() {
        return false;
      },
    },
  };
  const lease = createInstanceLease(
    store,
    {
      instance: 'a',
      leaseMs: LEASE_MS,
      stopRunning: async () => {
        calls.push('stop running');
      },
      renewed: async () => {
        calls.push('look for what others left');
      },
    },
    silentLogger,
    () => state.time,
  );
  return { lease, calls, state };
}

describe('instance lease', () => {
  it('renews the lease, then looks for what other servers left', async () => {
    const { lease, calls } = leaseWith();
    await lease.take();
    await lease.tick();
    expect(lease.held).toBe(true);
    expect(calls).toEqual(['register a', 'renew', 'look for what others left']);
  });

  it('keeps its tasks while renewals fail for less than three quarters of the lease', async () => {
    const { lease, calls, state } = leaseWith();
    await lease.take();
    state.answer = 'unreachable';
    state.time = (LEASE_MS * 3) / 4;
    await lease.tick();
    expect(lease.held).toBe(true);
    expect(calls).not.toContain('stop running');
  });

  it('stops its tasks and claims nothing past three quarters of the lease unrenewed, then takes it again', async () => {
    const { lease, calls, state } = leaseWith();
    await lease.take();
    state.answer = 'unreachable';
    state.time = (LEASE_MS * 3) / 4 + 1;
    await lease.tick();
    expect(lease.held).toBe(false);
    expect(calls.filter((call) => call === 'stop running')).toHaveLength(1);
    // Once the database answers, the lease is taken anew (whether or not another ended it).
    state.answer = 'renewed';
    await lease.tick();
    expect(lease.held).toBe(true);
    expect(calls.slice(-2)).toEqual(['register a', 'look for what others left']);
  });

  it('stops its tasks before taking the lease again when another server ended it', async () => {
    const { lease, calls, state } = leaseWith();
    await lease.take();
    state.answer = 'gone';
    await lease.tick();
    expect(lease.held).toBe(true);
    expect(calls).toEqual(['register a', 'renew', 'stop running', 'register a', 'look for what others left']);
  });
});
