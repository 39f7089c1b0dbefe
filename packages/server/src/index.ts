export { type AppOptions, DEFAULT_RATE_LIMIT } from './app.js';
export { DomainError } from './domain/errors.js';
export {
  createSecretBox,
  newSecretKeyText,
  parseSecretKey,
  type SecretBox,
} from './domain/secrets/secret-box.js';
export type { RateLimit } from './http/rate-limit.js';
export { apiValidator } from './http/validator.js';
export { createJsonLogger, type Logger, type LogLevel, silentLogger } from './logger.js';
export {
  type ContainerEngine,
  type ContainerEngineName,
  DEFAULT_SEARCH_PATH,
  findEngine,
  type Runner,
  type RunnerOptions,
  removeTreeSync,
  taskUsersProblem,
  type UidRange,
} from './runner/index.js';
export type {
  Notifier,
  NotifierOptions,
  SmtpOptions,
} from './scheduler/notifier.js';
export {
  createPurger,
  type PurgeCounts,
  type Purger,
  type PurgerOptions,
  type RetentionOptions,
} from './scheduler/purger.js';
export type {
  Scheduler,
  SchedulerOptions,
  ServerAccess,
} from './scheduler/scheduler.js';
export {
  type ComposedServer,
  composeServer,
  type ServerOptions,
} from './server.js';
export {
  createProvisioningService,
  DEFAULT_ADMIN_EMAIL,
  DEFAULT_ORGANIZATION,
  type Services,
  type WorkNotifier,
} from './services/index.js';
export type { Ticker, TickerOptions } from './sources/time-ticker.js';
export {
  type BackgroundCheckpoints,
  type Checkpoints,
  type Durability,
  type ExclusiveLock,
  isPostgresUrl,
  lockServerInstance,
  openStore,
  type Store,
  takeExclusiveLock,
} from './store/index.js';
