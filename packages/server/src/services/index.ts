import type { Store } from '../store/index.js';
import { createAccountService } from './accounts.service.js';
import { createAuthService } from './auth.service.js';
import { createCommandService } from './commands.service.js';
import { createEventService } from './events.service.js';
import { createOrganizationService } from './organizations.service.js';
import { createPipelineService } from './pipelines.service.js';
import { createProjectService } from './projects.service.js';
import { createProvisioningService } from './provisioning.service.js';
import { createResourceService } from './resources.service.js';
import { createScratchpadService } from './scratchpads.service.js';
import { createTaskService } from './tasks.service.js';
import type { WorkNotifier } from './work.js';

export type { WorkNotifier } from './work.js';

/** The use cases over one store; `work` is the scheduler, told about new work. */
export function createServices(store: Store, work: WorkNotifier, clock: () => Date = () => new Date()) {
  const projects = createProjectService(store);
  const pipelines = createPipelineService(store, work, clock);
  return {
    auth: createAuthService(store, clock),
    organizations: createOrganizationService(store),
    accounts: createAccountService(store),
    projects,
    resources: createResourceService(store, projects, clock),
    commands: createCommandService(store, work, clock),
    events: createEventService(store, work, clock),
    pipelines,
    tasks: createTaskService(store),
    scratchpads: createScratchpadService(store, pipelines),
    provisioning: createProvisioningService(store, clock),
  };
}

export type Services = ReturnType<typeof createServices>;
