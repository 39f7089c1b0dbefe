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
import { createPollingChangeFeed } from './streams/change-feed.js';
import { createStreamService } from './streams.service.js';
import { createTaskService } from './tasks.service.js';
import { createWebhookService } from './webhooks.service.js';
import type { ScheduleNotifier, WorkNotifier } from './work.js';

export { nextTurn } from './concurrency/time-slices.js';
export { type RevealedIdentity, revealIdentities } from './identities.service.js';
export { type Admission, createEventIntake } from './intake/event-intake.js';
export { completeInstantiations } from './intake/instantiation.js';
export { finishPipeline, settlePipeline } from './intake/pipeline-queue.js';
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
export { turnIsOver } from './streams/turns.js';
export type { ScheduleNotifier, WorkNotifier } from './work.js';

/** Where no ticker runs, nothing hears of changed schedules. */
const NO_TICKER: ScheduleNotifier = { schedulesChanged: () => undefined };

/** What the services are given besides their store and the scheduler. */
export interface ServiceOptions {
  clock?: () => Date;
  /** The ticker of time triggers, told about changed triggers. */
  schedules?: ScheduleNotifier;
  /** Seals identities under the server's identity key; without it, under a key of this process only (tests). */
  secrets?: SecretBox;
  /**
   * A connection of the same database whose commits are not synced to disk, for writes a crash
   * may lose because nothing acknowledged depends on them until a synced commit of `store`,
   * which syncs them too (an installation's hidden rows). Without it, `store`.
   */
  unsynced?: Store;
  /**
   * How often live streams check the database for commits besides those the store tells of
   * (default 100 ms): a test makes it long, so that only the store's word brings a change in time.
   */
  changeChecksMs?: number;
}

/** The use cases over one store; `work` is the scheduler, told about new work. */
export function createServices(
  store: Store,
  work: WorkNotifier,
  {
    clock = () => new Date(),
    schedules = NO_TICKER,
    secrets = createSecretBox(randomBytes(SECRET_KEY_BYTES)),
    unsynced = store,
    changeChecksMs,
  }: ServiceOptions = {},
) {
  const projects = createProjectService(store);
  const pipelines = createPipelineService(store, work, clock);
  const intake = createEventIntake(store, work, clock);
  const events = createEventService(store, intake);
  const resources = createResourceService(store, unsynced, projects, clock, schedules);
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
    streams: createStreamService(store, createPollingChangeFeed(store, { intervalMs: changeChecksMs })),
    notifications: createNotificationService(store),
  };
}

export type Services = ReturnType<typeof createServices>;
