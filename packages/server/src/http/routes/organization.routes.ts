import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';

export function organizationRoutes(services: Services): Handlers {
  return {
    async getOrganization(_req, res) {
      res.json(await services.organization.getCurrent(principalOf(res)));
    },
  };
}
