/** Whether `url` names a PostgreSQL database (else it is a SQLite file). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}
