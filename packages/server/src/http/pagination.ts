import type { Request } from 'express';
import { DEFAULT_PAGE_SIZE, type Order, type PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';

/** Reads the cursor query parameters, already checked against the spec by the validator. */
export function pageRequest(req: Request): PageRequest {
  const query = req.query as Record<string, string | undefined>;
  if (query.after !== undefined && query.before !== undefined) {
    // The one rule of the cursor that the spec cannot state.
    const reason = 'after and before cannot be used together';
    throw new DomainError('invalid_query_parameter', `invalid query parameter before: ${reason}`, {
      parameter: 'before',
      reason,
    });
  }
  return {
    after: query.after,
    before: query.before,
    size: query.size === undefined ? DEFAULT_PAGE_SIZE : Number(query.size),
    sort: query.sort ?? 'id',
    order: (query.order ?? 'asc') as Order,
  };
}
