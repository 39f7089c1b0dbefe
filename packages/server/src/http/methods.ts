import type { RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';
import { specOperations } from './spec-operations.js';

/** The order methods are listed in, in `Allow`. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface SpecPath {
  /** Matches the request paths of the spec path, such as `/v0/projects/id/{id}`. */
  pattern: RegExp;
  /** Methods of its operations. */
  declared: Set<string>;
  /** What it answers: its operations' methods, HEAD where it has GET, and OPTIONS. */
  allowed: Set<string>;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A template variable matches one whole segment, percent-encoded as it came; a trailing
 * slash is allowed, as the validator allows it.
 */
export function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map(escapeRegExp);
  return new RegExp(`^${parts.join('[^/]+')}/?$`);
}

function specPaths(document: Record<string, unknown>): SpecPath[] {
  const declaredByPath = new Map<string, Set<string>>();
  for (const { path, method } of specOperations(document)) {
    const declared = declaredByPath.get(path) ?? new Set<string>();
    declared.add(method.toUpperCase());
    declaredByPath.set(path, declared);
  }
  return [...declaredByPath].map(([path, declared]) => {
    const allowed = new Set([...declared, 'OPTIONS']);
    if (declared.has('GET')) allowed.add('HEAD');
    return { pattern: templatePattern(`/v0${path}`), declared, allowed };
  });
}

const allowList = (methods: Set<string>) => METHOD_ORDER.filter((method) => methods.has(method)).join(', ');

/**
 * What HTTP says of methods, before the validator sees a request (RFC 9110 §9): `OPTIONS`
 * answers 200 with the path's methods in `Allow` (`OPTIONS *`, those of the whole API), `HEAD`
 * is served as the `GET` of the path (without its body) where the spec has no `HEAD` of its
 * own, and a method the path does not have answers 405 method_not_allowed with the same
 * `Allow`. Paths the spec does not have are left to the validator, which answers
 * route_not_found.
 */
export function methodHandling(document: Record<string, unknown>): RequestHandler {
  const paths = specPaths(document);
  const everyMethod = new Set(paths.flatMap((path) => [...path.allowed]));
  const answerOptions = (res: Parameters<RequestHandler>[1], methods: Set<string>) => {
    // 200, not 204: RFC 9110 §9.3.7 wants Content-Length: 0, which a 204 must not carry.
    res
      .status(200)
      .set({ Allow: allowList(methods), 'Content-Length': '0' })
      .end();
  };
  return (req, res, next) => {
    if (req.method === 'OPTIONS' && req.url === '*') return answerOptions(res, everyMethod);
    const matching = paths.filter((path) => path.pattern.test(req.path));
    if (matching.length === 0) return next();
    const declared = new Set(matching.flatMap((path) => [...path.declared]));
    const allowed = new Set(matching.flatMap((path) => [...path.allowed]));
    if (req.method === 'OPTIONS') return answerOptions(res, allowed);
    if (!allowed.has(req.method)) {
      throw new DomainError('method_not_allowed', `method ${req.method} is not allowed on ${req.path}`, {
        allow: allowList(allowed),
      });
    }
    // Node knows the request was HEAD and sends no body; everything after serves it as GET, but
    // for an answer that never ends by itself (a stream), which ends after its headers.
    if (req.method === 'HEAD' && !declared.has('HEAD')) {
      req.method = 'GET';
      res.locals.head = true;
    }
    next();
  };
}
