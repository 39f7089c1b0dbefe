import { openapiDocument } from '@pipewright/types';
import express, { type Express } from 'express';
import { DomainError } from './domain/errors.js';
import { authenticate } from './http/authenticate.js';
import { dispatch } from './http/dispatch.js';
import { errorHandler } from './http/errors.js';
import { jsonBodies } from './http/json-body.js';
import { sendJsonAsApplicationJson } from './http/json-response.js';
import { methodHandling } from './http/methods.js';
import { createOpenStreams, DEFAULT_STREAM_LIMITS, type StreamLimits } from './http/open-streams.js';
import { projectOperations, projectScope } from './http/project-scope.js';
import { publicRoutes } from './http/public-routes.js';
import { type RateLimit, rateLimit } from './http/rate-limit.js';
import { rawTextBody } from './http/raw-text.js';
import { requestLog } from './http/request-log.js';
import { originForm } from './http/request-target.js';
import { accountRoutes } from './http/routes/accounts.routes.js';
import { apiKeyRoutes } from './http/routes/api-keys.routes.js';
import { commandRoutes } from './http/routes/commands.routes.js';
import { eventRoutes } from './http/routes/events.routes.js';
import { identityRoutes } from './http/routes/identities.routes.js';
import { notificationRoutes } from './http/routes/notifications.routes.js';
import { organizationRoutes } from './http/routes/organization.routes.js';
import { pipelineRoutes } from './http/routes/pipelines.routes.js';
import { projectRoutes } from './http/routes/projects.routes.js';
import { resourceRoutes } from './http/routes/resources.routes.js';
import { scratchpadRoutes } from './http/routes/scratchpad.routes.js';
import { statusRoutes } from './http/routes/status.routes.js';
import { streamRoutes } from './http/routes/streams.routes.js';
import { taskRoutes } from './http/routes/tasks.routes.js';
import { webhookRoutes } from './http/routes/webhooks.routes.js';
import { refuseWhileStopping } from './http/stopping.js';
import { apiValidator } from './http/validator.js';
import { compileValidatorsAhead } from './http/validator-warm-up.js';
import { webDashboard } from './http/web.js';
import { type Logger, silentLogger } from './logger.js';
import type { Services } from './services/index.js';

export interface AppOptions {
  services: Services;
  logger?: Logger;
  /** Largest accepted request body, in bytes (default 1 MiB). */
  bodyLimitBytes?: number;
  /** Per-key request rate; false turns it off (default 100/s, bursts of 200). */
  rateLimit?: RateLimit | false;
  /** Validate every response against the spec too (tests do; a failure answers 500). */
  validateResponses?: boolean;
  /** True once the server is stopping: requests then get 503, but those of running tasks' keys. */
  isStopping?: () => boolean;
  /** Limits of the live streams (GET /changes, GET /tasks/id/{id}/output); the defaults the spec states. */
  streams?: Partial<StreamLimits>;
  /** Directory of the built web dashboard (apps/web/dist), served at `/` when given. */
  webRoot?: string;
}

/** Largest scratchpad value, in bytes (the spec says so too). */
const SCRATCHPAD_VALUE_LIMIT_BYTES = 65_536;

export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 100, burst: 200 };

/** The HTTP API, and a way to have its first requests find their validators compiled. */
export interface App extends Express {
  /** Compiles the request validators of every operation now, an operation per turn of the event loop. */
  compileValidatorsAhead(): Promise<void>;
}

/** The whole HTTP API as an Express application. It never listens and reads no environment. */
export function createApp(options: AppOptions): App {
  const { services, logger = silentLogger } = options;
  const limit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  const streamLimits = { ...DEFAULT_STREAM_LIMITS, ...options.streams };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  sendJsonAsApplicationJson(app);

  // First: everything after sees the origin-form of the target, whatever form was sent.
  app.use(originForm());
  app.use(requestLog(logger));
  // The dashboard's files are public (the app signs in against /v0); before authentication.
  if (options.webRoot) app.use(webDashboard(options.webRoot));
  // Webhook deliveries take no key: their webhook's identifier and signature stand for it.
  app.use(authenticate(services.auth, publicRoutes(openapiDocument)));
  if (options.isStopping) app.use(refuseWhileStopping(options.isStopping));
  if (limit) app.use(rateLimit(limit));
  app.use(methodHandling(openapiDocument));
  app.put('/v0/pipelines/id/:id/scratchpad/key/:key', rawTextBody(SCRATCHPAD_VALUE_LIMIT_BYTES));
  app.use(jsonBodies(openapiDocument, options.bodyLimitBytes ?? 1024 * 1024));
  const validator = apiValidator(options.validateResponses ?? false);
  app.use(validator);
  app.use(projectScope(services.projects, projectOperations(openapiDocument)));

  app.use(
    dispatch(
      {
        ...statusRoutes(),
        ...organizationRoutes(services),
        ...accountRoutes(services),
        ...apiKeyRoutes(services),
        ...projectRoutes(services),
        ...resourceRoutes(services),
        ...identityRoutes(services),
        ...commandRoutes(services),
        ...eventRoutes(services),
        ...pipelineRoutes(services),
        ...scratchpadRoutes(services),
        ...taskRoutes(services),
        ...webhookRoutes(services),
        ...notificationRoutes(services),
        ...streamRoutes(services, createOpenStreams(streamLimits, options.isStopping), streamLimits),
      },
      openapiDocument,
    ),
  );
  app.use((req) => {
    // The validator answers unknown routes itself; this is for anything it let through.
    throw new DomainError('route_not_found', `no route ${req.method} ${req.path}`, { target: req.path });
  });
  app.use(errorHandler(logger));
  return Object.assign(app, {
    compileValidatorsAhead: async () => {
      // A validator of responses would wait for the made-up requests' responses: tests only.
      if (!options.validateResponses) await compileValidatorsAhead(app, validator, openapiDocument);
    },
  });
}
