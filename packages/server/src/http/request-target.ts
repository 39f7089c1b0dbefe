import type { RequestHandler } from 'express';

/** `scheme://authority` of an absolute-form target, the rest being its path and query. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)(.*)$/is;

/** A percent-encoded octet of an unreserved character (RFC 3986 §2.3): ALPHA DIGIT - . _ ~ */
const ENCODED_UNRESERVED = /%(2[DEde]|3\d|[46][1-9A-Fa-f]|[57][0-9Aa]|5[Ff]|7[Ee])/g;

export interface OriginForm {
  /** The path and query, as the origin-form would have sent them. */
  target: string;
  /** The authority of an absolute-form target, which takes the place of Host. */
  authority?: string;
}

/**
 * The origin-form of a request target (RFC 9112 §3.2). An absolute-form target
 * (`https://host:8443/v0/status?x=1`, which connection pools such as urllib3 send) becomes
 * its path and query, and its authority is returned to replace Host (§3.2.2); a target whose
 * authority has userinfo is left as it came, which the validator answers with route_not_found
 * (authentication does not depend on the path, so nothing is reached that way). Percent-encoded
 * unreserved characters are decoded in the path, as RFC 3986 §6.2.2.2 says URIs that differ
 * only by them are equivalent (`/projects/name/a%2Db` is `/projects/name/a-b`). Anything else,
 * `*` and malformed targets included, is returned as it came.
 */
export function toOriginForm(target: string): OriginForm {
  let authority: string | undefined;
  let rest = target;
  const absolute = ABSOLUTE_FORM.exec(target);
  if (absolute && !absolute[1]?.includes('@')) {
    authority = absolute[1];
    rest = absolute[2] ?? '';
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  const queryAt = rest.indexOf('?');
  const path = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const query = queryAt === -1 ? '' : rest.slice(queryAt);
  const normalized = path.includes('%')
    ? path.replace(ENCODED_UNRESERVED, (octet) => String.fromCharCode(Number.parseInt(octet.slice(1), 16)))
    : path;
  return { target: normalized + query, ...(authority !== undefined ? { authority } : {}) };
}

/**
 * Rewrites every request's target to its origin-form before anything else sees it: the
 * request log, authentication, the rate limit, the validator and the routes all work on
 * the same path whatever form the client sent.
 */
export function originForm(): RequestHandler {
  return (req, _res, next) => {
    const { target, authority } = toOriginForm(req.url);
    // Express keeps the target it received as originalUrl, which the validator reads.
    req.url = target;
    req.originalUrl = target;
    if (authority !== undefined) req.headers.host = authority;
    next();
  };
}
