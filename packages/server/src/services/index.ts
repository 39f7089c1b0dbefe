import { randomBytes } from 'node:crypto';
import { createSecretBox, SECRET_KEY_BYTES, type SecretBox } from '../domain/secrets/secret-box.js';
import type { Store } from '../store/index.js';
import { createAccountService } from './accounts.service.js';
import { createApiKeyService } from './api-keys.service.js';
import { createAuthService } from './auth.service.js';
import { createCommandService } from './commands.service.js';
import { createEventService } from './events.service.js';
import { createIdentityService } from './identities.service.js';
import { createEventIntake } from './intake/event-intake.js';
import { createNextTicksService } from './next-ticks.service.js';
import { createNotificationService } from './notifications.service.js';
import { createOrganizationService } from './organization.service.js';
import { createPipelineService } from './pipelines.service.js';
import { createProjectService } from './projects.service.js';
import { createProvisioningService } from './provisioning.service.js';
import { createResourceService } from './resources.service.js';
import { createScratchpadService } from './scratchpad.service.js';
import { createStreamService } from './streams.service.js';
import { createTaskService } from './tasks.service.js';
import { createWebhookService } from './webhooks.service.js';
import type { ScheduleNotifier, WorkNotifier } from './work.js';

export { nextTurn } from './concurrency/time-slices.js';
export { type RevealedIdentity, revealIdentities } from './identities.service.js';
export { type Admission, createEventIntake } from './intake/event-intake.js';
export { completeInstantiations } from './intake/instantiation.js';
export { finishPipeline } from './intake/pipeline-queue.js';
export {
  type AttemptResult,
  claimDueNotifications,
  recordNotificationAttempt,
} from './notifications/queue.js';
export {
  createProvisioningService,
  DEFAULT_ADMIN_EMAIL,
  DEFAULT_ORGANIZATION,
} from './provisioning.service.js';
export { SPECS_SCHEMA_POINTER } from './resources/spec-schemas.js';
// The services' public surface: what the scheduler, http and the program use besides createServices.
export type { ChangeFeed } from './streams/change-feed.js';
export type { ChangeFilters } from './streams/project-changes.js';
export type {
  EndReason,
  OpenStream,
  StreamMessage,
  StreamRequest,
  StreamSink,
} from './streams/stream-types.js';
export type { ScheduleNotifier, WorkNotifier } from './work.js';

/** Where no ticker runs, nothing hears of changed schedules. */
const NO_TICKER: ScheduleNotifier = { schedulesChanged: () => undefined };

/**
 * The use cases over one store; `work` is the scheduler, told about new work, and
 * `schedules` the ticker of time triggers, told about changed triggers, and `secrets` seals
 * identities under the server's identity key.
 */
export function createServices(
  store: Store,
  work: WorkNotifier,
  clock: () => Date = () => new Date(),
  schedules: ScheduleNotifier = NO_TICKER,
  // Without it, identities are sealed under a key of this process only (tests).
  secrets: SecretBox = createSecretBox(randomBytes(SECRET_KEY_BYTES)),
) {
  const projects = createProjectService(store);
  const pipelines = createPipelineService(store, work, clock);
  const intake = createEventIntake(store, work, clock);
  const events = createEventService(store, intake);
  const resources = createResourceService(store, projects, clock, schedules);
  return {
    auth: createAuthService(store, clock),
    organization: createOrganizationService(store),
    accounts: createAccountService(store, clock),
    apiKeys: createApiKeyService(store, clock),
    projects,
    resources,
    nextTicks: createNextTicksService(resources, clock),
    commands: createCommandService(store, intake),
    events,
    webhooks: createWebhookService(store, intake, clock),
    pipelines,
    tasks: createTaskService(store),
    scratchpad: createScratchpadService(store, pipelines),
    identities: createIdentityService(store, secrets, clock),
    provisioning: createProvisioningService(store, clock),
    streams: createStreamService(store),
    notifications: createNotificationService(store),
  };
}

export type Services = ReturnType<typeof createServices>;
