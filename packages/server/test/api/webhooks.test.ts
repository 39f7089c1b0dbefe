import { createHmac, randomUUID } from 'node:crypto';
import type { ApiClient, Schemas } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { finished, pipeline, projectWith, resourceId, task } from '../helpers/projects.js';
import { rawRequest } from '../helpers/raw.js';
import { sharedTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';

const server = sharedTestServer();

const SECRET = 'a-secret-of-the-test-0123456789';

// The task succeeds only if the delivery's body reached it as the event's data.
const ci = [
  task('build', { steps: [{ code: 'grep -q refs/heads/main "$PIPEWRIGHT_CONTEXT_PATH"' }] }),
  pipeline('ci', [{ task: 'build' }]),
];

const webhookTrigger = (
  name: string,
  event: string,
  parameters?: Record<string, unknown>,
  filters?: Record<string, unknown>[],
) => ({
  type: 'trigger',
  version: 1,
  name,
  data: {
    connector: 'webhook',
    event,
    pipelines: ['ci'],
    ...(parameters ? { parameters } : {}),
    ...(filters ? { filters } : {}),
  },
});

const onMain = [{ path: '/ref', is_equal_to: 'refs/heads/main' }];

/** A project with the `ci` pipeline and `trigger`, its client, and the trigger's webhook. */
async function projectWithWebhook(trigger: Record<string, unknown>, secret: string | null = SECRET) {
  const { project, client } = await projectWith(server, [...ci, trigger]);
  const triggerId = await resourceId(client, 'trigger', trigger.name as string);
  const webhook =
    secret === null ? await webhookOf(client, triggerId) : await setSecret(client, triggerId, secret);
  return { project, client, triggerId, webhook };
}

async function webhookOf(client: ApiClient, triggerId: string) {
  const { data } = await client.GET('/triggers/id/{id}/webhook', { params: { path: { id: triggerId } } });
  if (!data) throw new Error('no webhook');
  return data;
}

async function setSecret(client: ApiClient, triggerId: string, secret: string) {
  const { data } = await client.PUT('/triggers/id/{id}/webhook/secret', {
    params: { path: { id: triggerId } },
    body: { secret },
  });
  if (!data) throw new Error('no webhook');
  return data;
}

const hmac = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

/** Posts `body` (exactly these bytes) to a webhook's path, with no API key, as a sender does. */
async function deliver(
  path: string,
  body: string,
  headers: Record<string, string> = {},
  target: TestServer = server,
) {
  return rawRequest(target.baseUrl, target.ca, {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

/** A delivery as GitHub makes it: signed with `secret`, with its own id. */
const github = (secret: string, body: string, event = 'push', delivery: string = randomUUID()) => ({
  'x-github-event': event,
  'x-github-delivery': delivery,
  'x-hub-signature-256': `sha256=${hmac(secret, body)}`,
});

const push = (ref: string) => JSON.stringify({ ref, after: randomUUID(), head_commit: { message: 'Fix' } });

/** The first pipeline a delivery started, as its answer says. */
const startedBy = (delivered: { json?: Record<string, unknown> | undefined }) =>
  String((delivered.json?.pipeline_ids as string[] | undefined)?.[0]);

async function eventsOf(client: ApiClient) {
  const { data } = await client.GET('/events', { params: { query: { size: 100 } } });
  return data?.elements ?? [];
}

async function pipelinesOf(client: ApiClient) {
  const { data } = await client.GET('/pipelines', { params: { query: { size: 100 } } });
  return data?.elements ?? [];
}

describe('receiveWebhook', () => {
  it("starts the trigger's pipeline with a signed GitHub delivery, the body as the event's data", async () => {
    const { project, client, triggerId, webhook } = await projectWithWebhook(
      webhookTrigger('on-push', 'push', { sender: 'github' }, onMain),
    );
    const body = push('refs/heads/main');
    const delivered = await deliver(webhook.path, body, github(SECRET, body));
    expect(delivered.status).toBe(200);
    expect(delivered.json).toEqual({
      accepted: true,
      event_id: expect.any(String),
      pipeline_ids: [expect.any(String)],
    });
    const { data: event } = await client.GET('/events/id/{id}', {
      params: { path: { id: delivered.json?.event_id as string } },
    });
    expect(event).toMatchObject({
      project_id: project.id,
      trigger_id: triggerId,
      connector: 'webhook',
      name: 'push',
      data: JSON.parse(body),
      original_event_id: null,
    });
    expect((await finished(client, startedBy(delivered))).status).toBe('successful');

    // A push to another branch fails the filter; GitHub's ping is not a push: both are
    // received, and neither stores an event nor starts a pipeline.
    const other = push('refs/heads/dev');
    expect((await deliver(webhook.path, other, github(SECRET, other))).json).toEqual({
      accepted: false,
      pipeline_ids: [],
      reason: "the trigger's filters do not hold for this delivery",
    });
    const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    expect((await deliver(webhook.path, ping, github(SECRET, ping, 'ping'))).json).toMatchObject({
      accepted: false,
      reason: 'the trigger listens to push deliveries, not ping',
    });
    expect(await eventsOf(client)).toHaveLength(1);
    expect(await pipelinesOf(client)).toHaveLength(1);
  });

  it('refuses a delivery whose signature is wrong or missing, and starts nothing', async () => {
    const { client, webhook } = await projectWithWebhook(
      webhookTrigger('on-push', 'push', { sender: 'github' }),
    );
    const body = push('refs/heads/main');
    const refusals = [
      github('another-secret-0123456789', body),
      { ...github(SECRET, body), 'x-hub-signature-256': hmac(SECRET, body) },
      { ...github(SECRET, body), 'x-hub-signature-256': `sha256=${hmac(SECRET, `${body} `)}` },
      { ...github(SECRET, body), 'x-hub-signature-256': 'sha256=00' },
      { 'x-github-event': 'push' },
    ];
    for (const headers of refusals) {
      const refused = await deliver(webhook.path, body, headers);
      expect(refused.status).toBe(403);
      expect(refused.json).toMatchObject({
        code: 'invalid_webhook_signature',
        data: { header: 'X-Hub-Signature-256' },
      });
    }
    expect(await eventsOf(client)).toEqual([]);
    expect(await pipelinesOf(client)).toEqual([]);
  });

  it('refuses every delivery of a signed trigger until its secret is set, and after it is removed', async () => {
    const { client, triggerId, webhook } = await projectWithWebhook(
      webhookTrigger('on-push', 'push', { sender: 'github' }),
      null,
    );
    expect(webhook).toEqual({
      trigger_id: triggerId,
      hook_id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      path: `/v0/hooks/${webhook.hook_id}`,
      secret_set: false,
    });
    const body = push('refs/heads/main');
    const unset = await deliver(webhook.path, body, github(SECRET, body));
    expect(unset.status).toBe(403);
    expect(unset.json).toMatchObject({ code: 'webhook_secret_not_set' });

    const set = await setSecret(client, triggerId, SECRET);
    expect(set).toEqual({ ...webhook, secret_set: true, secret_update_time: expect.any(String) });
    // The secret is never shown again.
    expect(JSON.stringify(await webhookOf(client, triggerId))).not.toContain(SECRET);
    expect((await deliver(webhook.path, body, github(SECRET, body))).json).toMatchObject({ accepted: true });

    await client.DELETE('/triggers/id/{id}/webhook/secret', { params: { path: { id: triggerId } } });
    expect(await webhookOf(client, triggerId)).toMatchObject({ secret_set: false });
    const again = push('refs/heads/main');
    expect((await deliver(webhook.path, again, github(SECRET, again))).json).toMatchObject({
      code: 'webhook_secret_not_set',
    });
    expect(await eventsOf(client)).toHaveLength(1);
  });

  it("checks GitLab's token, and takes the kind of a delivery from its object_kind", async () => {
    const { client, webhook } = await projectWithWebhook(
      webhookTrigger('on-push', 'push', { sender: 'gitlab' }),
    );
    const body = JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', after: randomUUID() });
    const wrong = await deliver(webhook.path, body, { 'x-gitlab-token': 'not-the-secret-0123456789' });
    expect(wrong.status).toBe(403);
    expect(wrong.json).toMatchObject({
      code: 'invalid_webhook_signature',
      data: { header: 'X-Gitlab-Token' },
    });
    expect((await deliver(webhook.path, body, {})).status).toBe(403);

    const accepted = await deliver(webhook.path, body, {
      'x-gitlab-token': SECRET,
      'x-gitlab-event-uuid': randomUUID(),
    });
    expect(accepted.json).toMatchObject({ accepted: true });
    const tag = JSON.stringify({ object_kind: 'tag_push', ref: 'refs/tags/v1' });
    expect((await deliver(webhook.path, tag, { 'x-gitlab-token': SECRET })).json).toMatchObject({
      accepted: false,
      reason: 'the trigger listens to push deliveries, not tag_push',
    });
    expect((await finished(client, startedBy(accepted))).status).toBe('successful');
  });

  it('checks a generic HMAC-SHA256 signature, with or without its prefix', async () => {
    const { client, webhook } = await projectWithWebhook(webhookTrigger('on-deploy', 'deploy'));
    const first = push('refs/heads/main');
    const second = push('refs/heads/main');
    expect(
      (await deliver(webhook.path, first, { 'x-signature-256': hmac(SECRET, first) })).json,
    ).toMatchObject({
      accepted: true,
    });
    expect(
      (
        await deliver(webhook.path, second, {
          'x-signature-256': `sha256=${hmac(SECRET, second).toUpperCase()}`,
        })
      ).json,
    ).toMatchObject({ accepted: true });
    const forged = await deliver(webhook.path, first, {
      'x-signature-256': hmac('not-the-secret-0123', first),
    });
    expect(forged.status).toBe(403);
    const wrong = await deliver(webhook.path, first, {
      'x-hub-signature-256': `sha256=${hmac(SECRET, first)}`,
    });
    expect(wrong.status).toBe(403);
    expect(wrong.json).toMatchObject({
      code: 'invalid_webhook_signature',
      data: { header: 'X-Signature-256' },
    });
    expect((await eventsOf(client)).map((event) => event.name)).toEqual(['deploy', 'deploy']);
  });

  it('accepts unsigned deliveries when the trigger says signed: false', async () => {
    const { client, webhook } = await projectWithWebhook(
      webhookTrigger('open', 'deploy', { signed: false }),
      null,
    );
    const delivered = await deliver(webhook.path, push('refs/heads/main'));
    expect(delivered.json).toMatchObject({ accepted: true });
    expect(await eventsOf(client)).toHaveLength(1);
  });

  it('refuses a replayed delivery: the same identifier, or the same body', async () => {
    const { client, webhook } = await projectWithWebhook(
      webhookTrigger('on-push', 'push', { sender: 'github' }),
    );
    const body = push('refs/heads/main');
    const headers = github(SECRET, body);
    expect((await deliver(webhook.path, body, headers)).json).toMatchObject({ accepted: true });

    const other = push('refs/heads/main');
    const replays = [
      headers,
      // The identifier is not signed: a replay under a new one is known by its body.
      github(SECRET, body),
      // A delivery GitHub redelivers keeps its identifier.
      github(SECRET, other, 'push', headers['x-github-delivery']),
    ];
    for (const replay of replays) {
      const bodyOf = replay['x-hub-signature-256'] === headers['x-hub-signature-256'] ? body : other;
      const refused = await deliver(webhook.path, bodyOf, replay);
      expect(refused.status).toBe(409);
      expect(refused.json).toMatchObject({ code: 'duplicate_webhook_delivery' });
    }
    expect(await eventsOf(client)).toHaveLength(1);
    expect(await pipelinesOf(client)).toHaveLength(1);
  });

  it('answers unknown_webhook for an unknown identifier, a renewed one, and a trigger of another connector', async () => {
    const { project, client, triggerId, webhook } = await projectWithWebhook(
      webhookTrigger('on-push', 'push', { sender: 'github' }),
    );
    const body = push('refs/heads/main');
    const unknown = await deliver(`/v0/hooks/${'x'.repeat(43)}`, body, github(SECRET, body));
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ code: 'unknown_webhook' });

    const { data: renewed } = await client.POST('/triggers/id/{id}/webhook/renew', {
      params: { path: { id: triggerId } },
    });
    expect(renewed).toMatchObject({ trigger_id: triggerId, secret_set: true });
    expect(renewed?.hook_id).not.toBe(webhook.hook_id);
    expect((await deliver(webhook.path, body, github(SECRET, body))).json).toMatchObject({
      code: 'unknown_webhook',
    });
    expect((await deliver(renewed?.path as string, body, github(SECRET, body))).json).toMatchObject({
      accepted: true,
    });

    // A reinstall keeps the webhook; a trigger that is no longer of connector webhook has none.
    const reinstall = (connector: string) =>
      client.PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id } },
        body: {
          specs: [
            ...ci,
            { ...webhookTrigger('on-push', 'push'), data: { connector, event: 'push', pipelines: ['ci'] } },
          ] as Schemas['ResourceSpec'][],
        },
      });
    await reinstall('webhook');
    expect((await webhookOf(client, triggerId)).hook_id).toBe(renewed?.hook_id);
    await reinstall('custom');
    const again = push('refs/heads/main');
    expect((await deliver(renewed?.path as string, again, github(SECRET, again))).status).toBe(404);
    await expect(
      client.GET('/triggers/id/{id}/webhook', { params: { path: { id: triggerId } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_webhook' });
  });

  it("cannot start another project's pipelines", async () => {
    const mine = await projectWithWebhook(webhookTrigger('on-push', 'push', { sender: 'github' }));
    const theirs = await projectWithWebhook(webhookTrigger('on-push', 'push', { sender: 'github' }));
    const body = push('refs/heads/main');
    expect((await deliver(mine.webhook.path, body, github(SECRET, body))).json).toMatchObject({
      accepted: true,
    });
    expect(await pipelinesOf(mine.client)).toHaveLength(1);
    expect(await pipelinesOf(theirs.client)).toEqual([]);

    // Another project's trigger has no webhook in this one, and its webhook is not this one's.
    await expect(
      mine.client.GET('/triggers/id/{id}/webhook', { params: { path: { id: theirs.triggerId } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_webhook' });
    expect(theirs.webhook.hook_id).not.toBe(mine.webhook.hook_id);
  });

  it('refuses a malformed body, a form, and a body that is not an object', async () => {
    const { webhook } = await projectWithWebhook(webhookTrigger('open', 'deploy', { signed: false }), null);
    expect((await deliver(webhook.path, '{"ref":')).json).toMatchObject({ code: 'invalid_json' });
    expect((await deliver(webhook.path, '[1]')).json).toMatchObject({ code: 'invalid_request_body' });
    const form = await deliver(webhook.path, 'payload=%7B%7D', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
  });
});

describe('webhook limits', () => {
  // One token per 100 seconds after a burst of 5: the sixth delivery at once is refused.
  const limited = sharedTestServer({ bodyLimitBytes: 2048, rateLimit: { perSecond: 0.01, burst: 5 } });

  async function limitedWebhook() {
    // A key of its own for the 4 requests that make it: the rate limit is per key too.
    const { client } = await projectWith(
      limited,
      [...ci, webhookTrigger('open', 'deploy', { signed: false })],
      await limited.newOrganization(),
    );
    const triggerId = await resourceId(client, 'trigger', 'open');
    return (await client.GET('/triggers/id/{id}/webhook', { params: { path: { id: triggerId } } })).data
      ?.path as string;
  }

  it('refuses a body over the server limit with 413', async () => {
    const path = await limitedWebhook();
    const large = await deliver(path, JSON.stringify({ ref: 'x'.repeat(4096) }), {}, limited);
    expect(large.status).toBe(413);
    expect(large.json).toMatchObject({ code: 'request_body_too_large' });
  });

  it('rate limits each webhook on its own', async () => {
    const path = await limitedWebhook();
    const statuses = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await deliver(path, push('refs/heads/main'), {}, limited)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await deliver(path, push('refs/heads/main'), {}, limited);
    expect(refused.json).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another spelling of the same path shares its bucket; another webhook has its own.
    expect((await deliver(`${path}/`, push('refs/heads/main'), {}, limited)).status).toBe(429);
    expect((await deliver(await limitedWebhook(), push('refs/heads/main'), {}, limited)).status).toBe(200);
  });
});

describe('trigger webhooks at installation', () => {
  it('refuses an unknown sender or parameter, with a pointer', async () => {
    const { project } = await projectWith(server, []);
    const specs = [...ci, webhookTrigger('bad', 'push', { sender: 'bitbucket', secret: 'in-clear' })];
    await expect(
      server.client().PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id } },
        body: { specs: specs as Schemas['ResourceSpec'][] },
      }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request_body',
      data: {
        // Only the problems of a webhook trigger: none of those a time trigger would have.
        jsv_errors: [
          expect.objectContaining({ pointer: '/specs/2/data/parameters/secret' }),
          expect.objectContaining({ pointer: '/specs/2/data/parameters/sender' }),
        ],
      },
    });
  });

  it('gives a webhook to triggers of connector webhook only', async () => {
    const name = uniqueName('evt');
    const { client } = await projectWith(server, [
      ...ci,
      {
        type: 'trigger',
        version: 1,
        name: 'custom',
        data: { connector: 'custom', event: name, pipelines: ['ci'] },
      },
    ]);
    const id = await resourceId(client, 'trigger', 'custom');
    await expect(
      client.PUT('/triggers/id/{id}/webhook/secret', { params: { path: { id } }, body: { secret: SECRET } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_webhook' });
    await expect(
      client.PUT('/triggers/id/{id}/webhook/secret', {
        params: { path: { id } },
        body: { secret: 'short' },
      }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_request_body' });
  });
});
