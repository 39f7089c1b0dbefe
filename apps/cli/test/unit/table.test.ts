import { describe, expect, it } from 'vitest';
import { fitWidths, formatDuration, renderTable } from '../../src/table.js';

describe('fitWidths', () => {
  it.each([
    // [natural widths, terminal width, fixed columns, fitted widths]
    [[10, 20, 5], undefined, [], [10, 20, 5]],
    [[10, 20, 5], 100, [], [10, 20, 5]],
    [[10, 20, 5], 35, [], [10, 16, 5]],
    [[10, 20, 5], 25, [], [8, 8, 5]],
    [[27, 20, 5], 40, [true], [27, 4, 5]],
    [[4, 4], 5, [], [3, 3]],
  ])('fits %j into %s (fixed %j)', (widths, max, fixed, fitted) => {
    expect(fitWidths(widths, max, fixed)).toEqual(fitted);
  });
});

describe('renderTable', () => {
  const columns = [
    { header: 'ID', value: (row: string[]) => row[0] ?? '', fixed: true },
    { header: 'TEXT', value: (row: string[]) => row[1] ?? '' },
  ];
  const rows = [
    ['id-1', 'a rather long text\non two lines'],
    ['id-22', 'short'],
  ];

  it('aligns every cell on one line, and cuts nothing without a width', () => {
    expect(renderTable(columns, rows)).toBe(
      'ID     TEXT\nid-1   a rather long text on two lines\nid-22  short\n',
    );
  });

  it('cuts the widest column that is not fixed to fit a terminal', () => {
    expect(renderTable(columns, rows, 20)).toBe('ID     TEXT\nid-1   a rather lon…\nid-22  short\n');
  });
});

describe('formatDuration', () => {
  it.each([
    ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:04.250Z', '4.3s'],
    ['2026-01-01T00:00:00.000Z', '2026-01-01T00:03:07.000Z', '3m07s'],
    ['2026-01-01T00:00:00.000Z', '2026-01-01T02:05:00.000Z', '2h05m'],
    [undefined, '2026-01-01T00:00:01.000Z', ''],
  ])('from %s to %s is %s', (start, end, shown) => {
    expect(formatDuration(start, end)).toBe(shown);
  });
});
