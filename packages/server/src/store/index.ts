import { createAccountStore } from './accounts.store.js';
import { createApiKeyStore } from './api-keys.store.js';
import { createChangeStamp } from './change-stamp.js';
import { createChangeStore } from './changes.store.js';
import { createCommandExecutionStore } from './command-executions.store.js';
import { type Checkpoints, type Db, type Durability, openDatabase } from './db.js';
import { createEventStore } from './events.store.js';
import { createIdentityStore } from './identities.store.js';
import { createNotificationDeliveryStore } from './notification-deliveries.store.js';
import { createOrganizationStore } from './organizations.store.js';
import { createPipelineStore } from './pipelines.store.js';
import { createProjectStore } from './projects.store.js';
import { createResourceStore } from './resources.store.js';
import { createRetentionStore } from './retention.store.js';
import { createScratchpadStore } from './scratchpads.store.js';
import { createStepExecutionStore } from './step-executions.store.js';
import { createStepOutputStore } from './step-output.store.js';
import { createTaskKeyStore } from './task-keys.store.js';
import { createTaskStore } from './tasks.store.js';
import { createTriggerScheduleStore } from './trigger-schedules.store.js';
import { createTriggerStore } from './triggers.store.js';
import { createWebhookStore } from './webhooks.store.js';

// The store's public surface: the row types that services and the scheduler name, and the data-dir lock.
export type { KeyOwner } from './api-keys.store.js';
export type { Change, ChangeKind } from './changes.store.js';
export type { Checkpoints, Db, Durability } from './db.js';
export type { EventFilters } from './events.store.js';
export { type ExclusiveLock, takeExclusiveLock } from './exclusive-lock.js';
export type { IdentityRecord } from './identities.store.js';
export type {
  ClaimedNotificationDelivery,
  DeliveryNext,
  NotificationDeliveryFilters,
  NotificationTarget,
} from './notification-deliveries.store.js';
export type { PipelineFilters, PipelineRecord } from './pipelines.store.js';
export type { InstallationTarget, StagedChange } from './resources.store.js';
export type { BatchResult, Cutoffs } from './retention.store.js';
export { BEFORE_FIRST_CHUNK, type ChunkKey, type OutputChunk } from './step-output.store.js';
export type { TaskKeyOwner } from './task-keys.store.js';
export type { TaskFilters } from './tasks.store.js';
export type { TimeTrigger } from './trigger-schedules.store.js';
export type { WebhookRecord, WebhookTarget } from './webhooks.store.js';

/** Every table's store over one database, and the way to group writes atomically. */
export function createStore(db: Db) {
  // One wrapper for every transaction: db.transaction() builds four wrapped functions per call.
  const immediate = db.transaction((fn: () => unknown) => fn()).immediate;
  return {
    organizations: createOrganizationStore(db),
    accounts: createAccountStore(db),
    apiKeys: createApiKeyStore(db),
    projects: createProjectStore(db),
    resources: createResourceStore(db),
    triggers: createTriggerStore(db),
    triggerSchedules: createTriggerScheduleStore(db),
    webhooks: createWebhookStore(db),
    events: createEventStore(db),
    commandExecutions: createCommandExecutionStore(db),
    pipelines: createPipelineStore(db),
    tasks: createTaskStore(db),
    stepExecutions: createStepExecutionStore(db),
    taskKeys: createTaskKeyStore(db),
    scratchpads: createScratchpadStore(db),
    identities: createIdentityStore(db),
    retention: createRetentionStore(db),
    changes: createChangeStore(db),
    stepOutput: createStepOutputStore(db),
    notificationDeliveries: createNotificationDeliveryStore(db),
    /** Differs after anything is committed, by this connection or another (see change-stamp.ts). */
    changeStamp: createChangeStamp(db),
    /** Runs `fn` in an IMMEDIATE transaction: it takes the write lock before reading. */
    transaction<T>(fn: () => T): T {
      return immediate(fn) as T;
    },
    /**
     * Copies what the write-ahead log holds into the database file, as far as readers allow,
     * without waiting for any lock (a PASSIVE checkpoint); returns the pages of the log, and
     * those copied so far.
     */
    checkpoint(): { logPages: number; copiedPages: number } {
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
      return { logPages: result?.log ?? 0, copiedPages: result?.checkpointed ?? 0 };
    },
    close(): void {
      db.close();
    },
  };
}

export type Store = ReturnType<typeof createStore>;

export function openStore(
  file: string,
  durability: Durability = 'full',
  checkpoints: Checkpoints = 'auto',
): Store {
  return createStore(openDatabase(file, durability, checkpoints));
}
