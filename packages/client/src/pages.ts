import type { ApiClient, ClientPaths as paths } from './client.js';

type Cursor = { after?: string; before?: string; size: number; sort: string; order: 'asc' | 'desc' };
interface PageBody<T> {
  elements: T[];
  previous?: Cursor;
  next?: Cursor;
}

/** Every path whose GET answers a page. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends {
    get: { responses: { 200: { content: { 'application/json': { elements: unknown[] } } } } };
  }
    ? P
    : never;
}[keyof paths];

type ListOperation<P extends ListPath> = paths[P]['get'];
export type ElementOf<P extends ListPath> =
  ListOperation<P>['responses'][200]['content']['application/json']['elements'][number];
export type ListQuery<P extends ListPath> = Omit<
  NonNullable<ListOperation<P>['parameters']['query']>,
  'after' | 'before'
>;

/**
 * Walks a list from its first page to its last, following `next`, and yields each element.
 * `query` sets the size, sort, order and filters of every page.
 */
export async function* walk<P extends ListPath>(
  client: ApiClient,
  path: P,
  query?: ListQuery<P>,
): AsyncGenerator<ElementOf<P>> {
  let cursor: Record<string, unknown> = { ...query };
  for (;;) {
    // The path is one of the list paths; openapi-fetch cannot narrow a generic one.
    const { data } = await (client.GET as (p: string, init: unknown) => Promise<{ data?: unknown }>)(path, {
      params: { query: cursor },
    });
    const page = data as PageBody<ElementOf<P>>;
    yield* page.elements;
    if (!page.next) return;
    cursor = { ...query, ...page.next };
  }
}
