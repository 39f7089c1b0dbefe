import type { Schemas } from '@pipewright/types';
import type { Response } from 'express';
import type { Principal } from '../domain/principal.js';

// What the middlewares learn about a request, kept in res.locals under typed accessors.

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('route reached without authentication');
  return principal;
}

/** The caller, or undefined on a public route (a webhook delivery), which takes no key. */
export function principalIfAny(res: Response): Principal | undefined {
  return res.locals.principal as Principal | undefined;
}

export function projectOf(res: Response): Schemas['Project'] {
  const project = res.locals.project as Schemas['Project'] | undefined;
  if (!project) throw new Error('project route reached without a current project');
  return project;
}
