import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function notificationRoutes({ notifications }: Services): Handlers {
  return {
    async listNotificationDeliveries(req, res) {
      const query = req.query as Record<string, string | undefined>;
      const filters = {
        pipelineId: query.pipeline_id,
        status: query.status as Schemas['NotificationDeliveryStatus'] | undefined,
      };
      res.json(await notifications.list(projectOf(res), filters, pageRequest(req)));
    },
  };
}
