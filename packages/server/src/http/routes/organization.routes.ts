import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';

export function organizationRoutes(services: Services): Handlers {
  return {
    getOrganization(_req, res) {
      res.json(services.organization.getCurrent(principalOf(res)));
    },
  };
}
