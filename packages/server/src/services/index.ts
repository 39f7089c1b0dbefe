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
import type { ScheduleNotifier, WorkNotifier } from './work.js';

// The services' public surface: what the scheduler, http and the program use besides createServices.
export { completeInstantiations, instantiatePipelines } from './instantiation.js';
export { finishPipeline } from './pipeline-queue.js';
export {
  createProvisioningService,
  DEFAULT_ADMIN_EMAIL,
  DEFAULT_ORGANIZATION,
} from './provisioning.service.js';
export { SPECS_SCHEMA_POINTER } from './resource-spec-schemas.js';
export type { ScheduleNotifier, WorkNotifier } from './work.js';

/** Where no ticker runs, nothing hears of changed schedules. */
const NO_TICKER: ScheduleNotifier = { schedulesChanged: () => undefined };

/**
 * The use cases over one store; `work` is the scheduler, told about new work, and
 * `schedules` the ticker of time triggers, told about changed triggers.
 */
export function createServices(
  store: Store,
  work: WorkNotifier,
  clock: () => Date = () => new Date(),
  schedules: ScheduleNotifier = NO_TICKER,
) {
  const projects = createProjectService(store);
  const pipelines = createPipelineService(store, work, clock);
  return {
    auth: createAuthService(store, clock),
    organizations: createOrganizationService(store),
    accounts: createAccountService(store),
    projects,
    resources: createResourceService(store, projects, clock, schedules),
    commands: createCommandService(store, work, clock),
    events: createEventService(store, work, clock),
    pipelines,
    tasks: createTaskService(store),
    scratchpads: createScratchpadService(store, pipelines),
    provisioning: createProvisioningService(store, clock),
  };
}

export type Services = ReturnType<typeof createServices>;
