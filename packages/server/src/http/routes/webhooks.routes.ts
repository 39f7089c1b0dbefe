import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { rawJsonBody } from '../json-body.js';

/** Where the deliveries of a webhook are posted, under the server's address. */
const hookPath = <T extends { hook_id: string }>(webhook: T) => ({
  ...webhook,
  path: `/v0/hooks/${webhook.hook_id}`,
});

export function webhookRoutes({ webhooks }: Services): Handlers {
  return {
    async receiveWebhook(req, res) {
      // The validator has checked the body is a JSON object, which the JSON parser read.
      const receipt = await webhooks.receive(req.params.hook_id as string, {
        body: rawJsonBody(req) ?? Buffer.alloc(0),
        data: req.body as Record<string, unknown>,
        header: (name) => req.get(name),
      });
      res.json(receipt);
    },
    async getTriggerWebhook(req, res) {
      res.json(hookPath(await webhooks.get(projectOf(res), req.params.id as string)));
    },
    async renewTriggerWebhook(req, res) {
      res.json(hookPath(await webhooks.renew(projectOf(res), req.params.id as string)));
    },
    async setTriggerWebhookSecret(req, res) {
      const { secret } = req.body as Schemas['TriggerWebhookSecret'];
      res.json(hookPath(await webhooks.setSecret(projectOf(res), req.params.id as string, secret)));
    },
    async deleteTriggerWebhookSecret(req, res) {
      await webhooks.deleteSecret(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
  };
}
