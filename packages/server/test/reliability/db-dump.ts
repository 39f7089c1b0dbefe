import Database from 'better-sqlite3';

// Columns a request may touch without being a write of its own: the login time of an
// account is recorded at most once a minute by authentication. And the server's lease, which it
// renews every few seconds (scheduler/instance-lease.ts): the server's life, not stored data.
const INCIDENTAL = new Set(['accounts.last_login_time', 'server_instances.expires_at']);

/**
 * Every row of every table of the SQLite file, as text, read through a connection of its
 * own: two dumps are equal exactly when the stored data is.
 */
export function dumpDatabase(file: string): Record<string, string[]> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((t) => t.name);
    return Object.fromEntries(
      tables.map((table) => {
        const rows = db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[];
        const text = rows.map((row) =>
          JSON.stringify(Object.entries(row).filter(([column]) => !INCIDENTAL.has(`${table}.${column}`))),
        );
        return [table, text.sort()];
      }),
    );
  } finally {
    db.close();
  }
}
