import {
  type AliasedRawBuilder,
  DummyDriver,
  type Expression,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
  type SqlBool,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import type { DB } from './generated/database.js';
import { encodedParameter } from './prepared.js';

/**
 * The stores' queries are built with Kysely and compiled to the SQL of the database they run
 * on: one code path for SQLite and PostgreSQL where their SQL agrees. Where it differs, the
 * difference is one of the fragments below, so that each store says what it means (the text
 * at a JSON path, one of a list of ids) and this file alone says how each database writes it.
 * Kysely only builds and compiles: our executors (sql.ts, postgres.ts) run what it compiles.
 */
export type QueryBuilder = Kysely<DB>;

/** A text, an integer or a column of the schema, as a query's fragment. */
type Operand = Expression<unknown>;

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** Builds the queries; it has no connection of its own. */
  readonly q: QueryBuilder;
  /**
   * The text at `path` (property names) of the JSON document that the text column `column`
   * holds, or null. Both are literals in the SQL: an index on that expression serves only the
   * very same expression (migrations write it the same way).
   */
  jsonText(column: string, ...path: string[]): RawBuilder<string | null>;
  /** The number at `path` of the JSON document that `column` holds, or null; literals as for jsonText. */
  jsonNumber(column: string, ...path: string[]): RawBuilder<number | null>;
  /** Whether `value` is one of `list`: a statement of one text whatever the list's length. */
  oneOf(value: Operand, list: readonly string[]): RawBuilder<SqlBool>;
  /** The strings of the JSON array that the text `json` holds, as a table named `alias` with one column, `value`. */
  jsonStrings<A extends string>(json: Operand, alias: A): AliasedRawBuilder<{ value: string }, A>;
  /**
   * Table `table` read through its index `index` where the database takes such a hint (SQLite's
   * INDEXED BY, for a plan that its statistics-free planner would miss); elsewhere the table.
   */
  indexed<T extends keyof DB & string>(table: T, index: string): AliasedRawBuilder<DB[T], T>;
  /** The current time in the stored times' format (ISO 8601 in UTC, to the millisecond). */
  readonly now: RawBuilder<string>;
  /** The bytes of a text in UTF-8. */
  byteLength(text: Operand): RawBuilder<number>;
  /**
   * A stored time as days, with their fraction, from an epoch of the database's own: to compare
   * with another, or to add days to, where an index is on such a sum (pipelines_expiring): on
   * SQLite julianday(), as migration 009 wrote it (an index on an expression serves only the
   * very same expression); on PostgreSQL epoch_days(), as its schema does.
   */
  dayNumber(time: Operand): RawBuilder<number>;
  /** The texts of `text` over a group concatenated in the order of `order`. */
  concatenated(text: Operand, order: Operand): RawBuilder<string>;
  /**
   * The database's clock, in milliseconds since the epoch: leases are timed by it, so that
   * servers whose clocks disagree still agree on when one expires.
   */
  readonly clockMs: RawBuilder<number>;
  /**
   * Whether a claim locks the row it reads and skips those locked (FOR UPDATE SKIP LOCKED):
   * PostgreSQL's; SQLite has one writer at a time.
   */
  readonly skipsLocked: boolean;
}

/** A Kysely that compiles only: running a query through it is a mistake, caught by its dummy driver. */
function compileOnly(compiler: 'sqlite' | 'postgres'): QueryBuilder {
  return new Kysely<DB>({
    dialect:
      compiler === 'sqlite'
        ? {
            createAdapter: () => new SqliteAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new SqliteIntrospector(db),
            createQueryCompiler: () => new SqliteQueryCompiler(),
          }
        : {
            createAdapter: () => new PostgresAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new PostgresIntrospector(db),
            createQueryCompiler: () => new PostgresQueryCompiler(),
          },
  });
}

/** A property name as a literal of SQL: they are ours, never a user's, and plain words. */
function propertyName(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain property name: ${name}`);
  return name;
}

export const sqlite: Dialect = {
  name: 'sqlite',
  q: compileOnly('sqlite'),
  jsonText: (column, ...path) =>
    sql`json_extract(${sql.ref(column)}, ${sql.lit(`$.${path.map(propertyName).join('.')}`)})`,
  jsonNumber: (column, ...path) =>
    sql`json_extract(${sql.ref(column)}, ${sql.lit(`$.${path.map(propertyName).join('.')}`)})`,
  oneOf: (value, list) =>
    sql`${value} IN (SELECT value FROM json_each(${encodedParameter(list, (l) => JSON.stringify(l))}))`,
  jsonStrings: (json, alias) => sql<{ value: string }>`json_each(${json})`.as(alias),
  // The alias comes before the hint: `tasks AS tasks INDEXED BY tasks_ready`.
  indexed: (table, index) =>
    sql<DB[typeof table]>`${sql.table(table)}`.as<typeof table>(
      sql`${sql.table(table)} INDEXED BY ${sql.id(index)}`,
    ),
  now: sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
  byteLength: (text) => sql<number>`length(CAST(${text} AS BLOB))`,
  dayNumber: (time) => sql<number>`julianday(${time})`,
  concatenated: (text, order) => sql<string>`group_concat(${text}, '' ORDER BY ${order})`,
  clockMs: sql<number>`CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`,
  skipsLocked: false,
};

export const postgres: Dialect = {
  name: 'postgres',
  q: compileOnly('postgres'),
  // Texts hold the JSON (as on SQLite): jsonb reads them; #>> gives the text at a path.
  jsonText: (column, ...path) =>
    sql`(${sql.ref(column)}::jsonb #>> ${sql.lit(`{${path.map(propertyName).join(',')}}`)})`,
  jsonNumber: (column, ...path) =>
    sql`(${sql.ref(column)}::jsonb #>> ${sql.lit(`{${path.map(propertyName).join(',')}}`)})::float8`,
  oneOf: (value, list) => sql`${value} = ANY(${list}::text[])`,
  jsonStrings: (json, alias) => sql<{ value: string }>`jsonb_array_elements_text(${json}::jsonb)`.as(alias),
  indexed: (table) => sql<DB[typeof table]>`${sql.table(table)}`.as(table),
  now: sql<string>`to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  byteLength: (text) => sql<number>`octet_length(${text})`,
  // A function of the schema's (migrations/postgres), IMMUTABLE so that an index can be on it.
  dayNumber: (time) => sql<number>`epoch_days(${time})`,
  concatenated: (text, order) => sql<string>`string_agg(${text}, '' ORDER BY ${order})`,
  // The time of the statement, not of its transaction's start (now()).
  clockMs: sql<number>`(extract(epoch FROM clock_timestamp()) * 1000)::bigint`,
  skipsLocked: true,
};
