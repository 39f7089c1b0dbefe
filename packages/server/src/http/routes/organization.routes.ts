import { Router } from 'express';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';

export function organizationRoutes(services: Services): Router {
  return Router().get('/org', function getOrganization(_req, res) {
    res.json(services.organizations.getCurrent(principalOf(res)));
  });
}
