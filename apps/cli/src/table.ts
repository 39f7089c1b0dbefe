/** A column of a table: its header and how a row shows in it. */
export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** Never cut: identifiers are copied from tables, a cut one is useless. */
  fixed?: boolean;
}

const GAP = '  ';
const MIN_WIDTH = 3;

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/**
 * Column widths that fit `maxWidth`: the widest column that may be cut gives up a
 * character at a time. Fixed columns keep their width, even if the table then overflows.
 */
export function fitWidths(widths: number[], maxWidth: number | undefined, fixed: boolean[] = []): number[] {
  const fitted = [...widths];
  if (maxWidth === undefined) return fitted;
  const total = () => fitted.reduce((sum, width) => sum + width, 0) + GAP.length * (fitted.length - 1);
  while (total() > maxWidth) {
    const cuttable = fitted.map((width, index) => (fixed[index] ? 0 : width));
    const widest = cuttable.indexOf(Math.max(...cuttable));
    if ((cuttable[widest] ?? 0) <= MIN_WIDTH) break;
    fitted[widest] = (fitted[widest] ?? 0) - 1;
  }
  return fitted;
}

/**
 * Rows under their headers, columns aligned. With `maxWidth` (a terminal's width) the
 * widest columns are cut, marked with `…`; without it nothing is cut, for pipes and files.
 */
export function renderTable<T>(columns: Column<T>[], rows: T[], maxWidth?: number): string {
  const cells = [
    columns.map((column) => column.header),
    ...rows.map((row) => columns.map((c) => oneLine(c.value(row)))),
  ];
  const natural = columns.map((_, index) => Math.max(...cells.map((line) => line[index]?.length ?? 0)));
  const widths = fitWidths(
    natural,
    maxWidth,
    columns.map((column) => column.fixed === true),
  );
  return cells
    .map((line) =>
      line
        .map((cell, index) => {
          const width = widths[index] ?? 0;
          const text = truncate(cell, width);
          return index === line.length - 1 ? text : text.padEnd(width);
        })
        .join(GAP)
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** Label-value lines, labels aligned; absent values are left out. */
export function renderFields(fields: [label: string, value: string | undefined][]): string {
  const shown = fields.filter((field): field is [string, string] => field[1] !== undefined);
  const width = Math.max(...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${`${label}:`.padEnd(width + 1)} ${value}\n`).join('');
}

/** A time as the API gives it, without milliseconds: `2026-11-22T10:00:00Z`. */
export function formatTime(time: string | undefined): string {
  return time ? time.replace(/\.\d+Z$/, 'Z') : '';
}

/** How long from `start` to `end` (or now): `4.2s`, `3m07s`, `2h05m`. */
export function formatDuration(start: string | undefined, end: string | undefined, now = Date.now()): string {
  if (!start) return '';
  const ms = (end ? Date.parse(end) : now) - Date.parse(start);
  if (!(ms >= 0)) return '';
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
