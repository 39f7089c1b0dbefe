import type { Request, RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';
import type { Services } from '../services/index.js';
import { principalIfAny } from './context.js';
import { type SpecOperation, specOperations } from './spec-operations.js';

const HEADER = 'x-service-project-id';

/** The operationIds that take the project header: the spec says which routes are project routes. */
export function projectOperations(document: Record<string, unknown>): Set<string> {
  const takesHeader = (operation: SpecOperation) =>
    operation.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === HEADER);
  return new Set(
    specOperations(document)
      .filter(takesHeader)
      .map((operation) => operation.operationId),
  );
}

/**
 * The streams take the project as the query parameter `project_id` too, for clients that cannot
 * set headers; the validator lets the parameter through only where the spec declares it.
 */
const projectQuery = (req: Request): string | undefined =>
  typeof req.query.project_id === 'string' ? req.query.project_id : undefined;

// The key of a task may use the routes of its own project, and check that the API is up.
const TASK_KEY_ROUTES = new Set(['getStatus', 'headStatus']);

/**
 * Resolves X-Service-Project-Id on the routes that declare it. The validator has already
 * answered 400 missing_project_id where the header is required and absent; a project that
 * is not the caller's organization's is 404 unknown_project, whatever exists elsewhere.
 */
export function projectScope(projects: Services['projects'], operations: Set<string>): RequestHandler {
  return async (req, res, next) => {
    const principal = principalIfAny(res);
    // A public route (a webhook delivery) has no key, and no project header.
    if (!principal) return next();
    const operationId = (req as { openapi?: { schema?: { operationId?: string } } }).openapi?.schema
      ?.operationId;
    const projectRoute = operationId !== undefined && operations.has(operationId);
    if (principal.projectId && !projectRoute && !TASK_KEY_ROUTES.has(operationId ?? '')) {
      throw new DomainError('permission_denied', 'the key of a task can only use the routes of its project');
    }
    const id = req.get(HEADER) ?? projectQuery(req);
    if (projectRoute && id !== undefined) {
      if (principal.projectId && id !== principal.projectId) {
        throw new DomainError('unknown_project', `no project with id ${id}`, { id });
      }
      res.locals.project = await projects.get(principal, id);
    }
    next();
  };
}
