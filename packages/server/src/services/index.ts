import type { Store } from '../store/index.js';
import { createAccountService } from './accounts.service.js';
import { createAuthService } from './auth.service.js';
import { createOrganizationService } from './organizations.service.js';
import { createProjectService } from './projects.service.js';
import { createProvisioningService } from './provisioning.service.js';
import { createResourceService } from './resources.service.js';

export function createServices(store: Store, clock: () => Date = () => new Date()) {
  const projects = createProjectService(store);
  return {
    auth: createAuthService(store, clock),
    organizations: createOrganizationService(store),
    accounts: createAccountService(store),
    projects,
    resources: createResourceService(store, projects, clock),
    provisioning: createProvisioningService(store, clock),
  };
}

export type Services = ReturnType<typeof createServices>;
