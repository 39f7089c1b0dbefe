import { type ApiClient, type ElementOf, type ListPath, type ListQuery, walk } from '@pipewright/client';
import type { Session } from './session.js';
import { type Column, renderTable } from './table.js';

interface Page<T> {
  elements: T[];
  next?: unknown;
}

/** The first page of a list as the server answers it, or every element when `all`. */
export async function fetchList<P extends ListPath>(
  client: ApiClient,
  path: P,
  query: ListQuery<P>,
  all: boolean,
): Promise<Page<ElementOf<P>>> {
  if (all) {
    const elements: ElementOf<P>[] = [];
    for await (const element of walk(client, path, query)) elements.push(element);
    return { elements };
  }
  // The path is one of the list paths; openapi-fetch cannot narrow a generic one (as in walk()).
  const { data } = await (client.GET as (p: string, init: unknown) => Promise<{ data?: unknown }>)(path, {
    params: { query },
  });
  return data as Page<ElementOf<P>>;
}

export function printJson(session: Session, value: unknown): void {
  session.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable<T>(session: Session, columns: Column<T>[], rows: T[]): void {
  session.stdout.write(renderTable(columns, rows, session.stdout.columns));
}

/**
 * Prints a list: a table fitted to the terminal, or with --json the page as the server
 * answered it (with --all, `{"elements": [...]}` holding every element, the same shape).
 */
export async function printList<P extends ListPath>(
  session: Session,
  client: ApiClient,
  path: P,
  query: ListQuery<P>,
  flags: { json?: boolean; all?: boolean },
  columns: Column<ElementOf<P>>[],
  noun: string,
): Promise<void> {
  const page = await fetchList(client, path, query, flags.all === true);
  if (flags.json) return printJson(session, page);
  if (page.elements.length === 0) {
    session.stderr.write(`No ${noun}.\n`);
    return;
  }
  printTable(session, columns, page.elements);
  if (page.next) session.stderr.write(`(first page only: --all lists every one of the ${noun})\n`);
}
