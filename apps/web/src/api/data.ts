import { type ApiClient, type ElementOf, type ListPath, type ListQuery, walk } from '@pipewright/client';

/** The data of a call that succeeded (the client rejects otherwise); 204 answers have none. */
export async function dataOf<T>(call: Promise<{ data?: T }>): Promise<T> {
  const { data } = await call;
  return data as T;
}

/** At most `limit` elements of a list, following its pages (bounded: lists can be long). */
export async function firstElements<P extends ListPath>(
  client: ApiClient,
  path: P,
  query: ListQuery<P>,
  limit: number,
): Promise<ElementOf<P>[]> {
  const elements: ElementOf<P>[] = [];
  for await (const element of walk(client, path, query)) {
    elements.push(element);
    if (elements.length >= limit) break;
  }
  return elements;
}
