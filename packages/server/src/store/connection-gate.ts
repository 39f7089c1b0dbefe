import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';
import { isPostgresUrl } from './database-url.js';

/**
 * Keeps the transactions of one database file, on this thread, from meeting anything else.
 * The stores answer with promises, so a transaction stays open across turns of the event loop
 * while other requests run; on SQLite they would otherwise write into it (its connection is
 * theirs too) or block the thread on its write lock (through the thread's other connection).
 * So a transaction holds the gate, and any call made while it is held waits its turn. A call
 * made while nothing holds it runs at once: the gate costs nothing to an idle database.
 */
export interface ConnectionGate {
  /** True while a transaction holds the gate or waits for it. */
  readonly busy: boolean;
  /** Runs `fn` alone: after everything that asked before it, and before anything that asks after. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Runs `fn` as a transaction's body: calls that wait for the gate from within it are a mistake. */
  within<T>(fn: () => Promise<T>): Promise<T>;
  /** Throws if called from a transaction's body with the checks on (see `STORE_CHECKS`). */
  checkOutside(): void;
}

/**
 * With `PIPEWRIGHT_STORE_CHECKS=1` (the tests set it), a call to the stores outside the
 * transaction made from inside one throws at once, instead of waiting for the transaction
 * that waits for it. Off by default: tracking async contexts slows every promise.
 */
const STORE_CHECKS = process.env.PIPEWRIGHT_STORE_CHECKS === '1';
const insideTransaction = STORE_CHECKS ? new AsyncLocalStorage<ConnectionGate>() : undefined;

function createConnectionGate(): ConnectionGate {
  let tail: Promise<unknown> = Promise.resolve();
  let holders = 0;
  const gate: ConnectionGate = {
    get busy() {
      return holders > 0;
    },
    exclusive<T>(fn: () => Promise<T>): Promise<T> {
      holders += 1;
      const turn = tail.then(fn);
      tail = turn.then(
        () => {
          holders -= 1;
        },
        () => {
          holders -= 1;
        },
      );
      return turn;
    },
    within<T>(fn: () => Promise<T>): Promise<T> {
      return insideTransaction ? insideTransaction.run(gate, fn) : fn();
    },
    checkOutside(): void {
      if (insideTransaction?.getStore() === gate) {
        throw new Error(
          'a store call outside the transaction was made from inside it: use the stores the transaction gives',
        );
      }
    },
  };
  return gate;
}

const gates = new Map<string, ConnectionGate>();

/**
 * The gate of `database` on this thread: a SQLite file (an in-memory database has one of its
 * own), or a PostgreSQL URL, whose transactions take their turns on it too.
 */
export function connectionGate(database: string): ConnectionGate {
  if (database === ':memory:' || database === '') return createConnectionGate();
  const key = isPostgresUrl(database) ? database : resolve(database);
  let gate = gates.get(key);
  if (!gate) {
    gate = createConnectionGate();
    gates.set(key, gate);
  }
  return gate;
}
