import type { Schemas } from '@pipewright/types';
import type { Principal } from '../domain/principal.js';
import type { Store } from '../store/index.js';

export function createOrganizationService(store: Store) {
  return {
    async getCurrent(principal: Principal): Promise<Schemas['Organization']> {
      const org = await store.organizations.get(principal.orgId);
      // The key was just resolved through this organization: it exists.
      if (!org) throw new Error(`organization ${principal.orgId} vanished`);
      return org;
    },
  };
}
