/** Dates are emitted in UTC with milliseconds: `2026-11-22T10:00:00.000Z`. */
export function formatTime(date: Date): string {
  return date.toISOString();
}

/** Accepts any RFC 3339 offset and converts it to the canonical UTC form. */
export function normalizeTime(value: string): string {
  return new Date(value).toISOString();
}
