import type { Store } from '../store/index.js';
import { createAccountService } from './accounts.service.js';
import { createAuthService } from './auth.service.js';
import { createOrganizationService } from './organizations.service.js';
import { createProjectService } from './projects.service.js';
import { createProvisioningService } from './provisioning.service.js';

export function createServices(store: Store, clock: () => Date = () => new Date()) {
  return {
    auth: createAuthService(store, clock),
    organizations: createOrganizationService(store),
    accounts: createAccountService(store),
    projects: createProjectService(store),
    provisioning: createProvisioningService(store, clock),
  };
}

export type Services = ReturnType<typeof createServices>;
