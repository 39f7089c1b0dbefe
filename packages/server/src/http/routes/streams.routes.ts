import type { Schemas } from '@pipewright/types';
import type { Request, Response } from 'express';
import { DomainError } from '../../domain/errors.js';
import type { Status } from '../../domain/execution/statuses.js';
import type { OpenStream, Services, StreamRequest, StreamSink } from '../../services/index.js';
import { bearerKey } from '../authenticate.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { eventStream } from '../event-stream.js';
import type { OpenStreams, StreamLimits } from '../open-streams.js';

export function streamRoutes(services: Services, streams: OpenStreams, limits: StreamLimits): Handlers {
  /**
   * Opens a stream for the request: refused (an error answer) while nothing is written yet, then
   * counted for its key until its connection closes.
   */
  const serve = async (
    req: Request,
    res: Response,
    open: (request: StreamRequest, sink: StreamSink) => Promise<OpenStream>,
  ) => {
    const principal = principalOf(res);
    const project = res.locals.project as Schemas['Project'] | undefined;
    if (!project) {
      throw new DomainError(
        'missing_project_id',
        'a stream needs a project: send X-Service-Project-Id, or the query parameter project_id',
      );
    }
    const uncount = streams.admit(principal.keyId);
    const key = bearerKey(req) as string;
    const events = eventStream(res, limits.bufferBytes);
    let stream: OpenStream;
    try {
      stream = await open(
        {
          principal,
          project,
          lastEventId: req.get('last-event-id'),
          stillAuthorized: async () => {
            try {
              await services.auth.authenticate(key);
              return true;
            } catch {
              return false;
            }
          },
        },
        events,
      );
    } catch (error) {
      uncount();
      throw error;
    }
    const release = streams.add(stream, events);
    const close = () => {
      stream.close();
      release();
      uncount();
    };
    // The consumer may have gone while the stream opened.
    if (res.closed) close();
    else res.on('close', close);
    // HEAD answers what GET would, its headers, and ends: a stream would never end it.
    if (res.locals.head === true) events.close();
  };

  return {
    async streamChanges(req, res) {
      const query = req.query as Record<string, string | undefined>;
      const filters = {
        pipeline_id: query.pipeline_id,
        pipeline_name: query.pipeline_name,
        status: query.status as Status | undefined,
      };
      await serve(req, res, (request, sink) => services.streams.projectChanges(request, filters, sink));
    },
    async streamTaskOutput(req, res) {
      const { offset } = req.query as Record<string, string | undefined>;
      const taskId = req.params.id as string;
      await serve(req, res, (request, sink) =>
        services.streams.taskOutput(request, taskId, offset === undefined ? undefined : Number(offset), sink),
      );
    },
  };
}
