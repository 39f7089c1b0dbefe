import type Database from 'better-sqlite3';
import type { Compilable } from 'kysely';
import type { Db } from './db.js';

/** Runs compiled queries on one connection. Each answers with a promise, as a database server would. */
export interface Executor {
  /** Every row the query returns. */
  all<R>(query: Compilable<R>): Promise<R[]>;
  /** The first row the query returns, if any. */
  first<R>(query: Compilable<R>): Promise<R | undefined>;
  /** Runs a query that returns nothing; says how many rows it changed. */
  run(query: Compilable<unknown>): Promise<{ changes: number }>;
}

/** Whether `error` is a database's refusal of a duplicate value of a unique index (SQLite's code, or PostgreSQL's SQLSTATE). */
export function isUniqueViolation(error: unknown): boolean {
  const { code } = error as { code?: string };
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

/** Statements prepared by an executor, kept by their SQL: a store's queries have few shapes. */
const MAX_STATEMENTS = 500;

/**
 * The executor of a better-sqlite3 connection. A statement is prepared once per SQL text; a
 * query runs at once and its promise is already settled, so that a transaction's body runs in
 * one turn of the event loop (see connection-gate.ts).
 */
export function sqliteExecutor(db: Db): Executor {
  const statements = new Map<string, Database.Statement>();
  const statement = (query: Compilable<unknown>) => {
    const compiled = query.compile();
    let prepared = statements.get(compiled.sql);
    if (!prepared) {
      if (statements.size >= MAX_STATEMENTS) statements.clear();
      prepared = db.prepare(compiled.sql);
      statements.set(compiled.sql, prepared);
    }
    return { prepared, parameters: compiled.parameters };
  };
  return {
    async all<R>(query: Compilable<R>) {
      const { prepared, parameters } = statement(query);
      return prepared.all(...parameters) as R[];
    },
    async first<R>(query: Compilable<R>) {
      const { prepared, parameters } = statement(query);
      return prepared.get(...parameters) as R | undefined;
    },
    async run(query: Compilable<unknown>) {
      const { prepared, parameters } = statement(query);
      return { changes: prepared.run(...parameters).changes };
    },
  };
}
