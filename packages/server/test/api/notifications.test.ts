import { createHmac } from 'node:crypto';
import type { ApiClient, ApiError, Schemas } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  type SmtpSink,
  startSmtpSink,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../helpers/notification-sinks.js';
import { command, finished, pipeline, projectWith, resourceId, task } from '../helpers/projects.js';
import { startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// Notifications of pipelines' ends: webhooks (signed with an identity's value) and emails,
// sent in the background by the notifier, retried, each attempt visible through the API. The
// receiver and the SMTP server are local; the notifier's waits are short here.

const ATTEMPTS = 3;
const TIMEOUT_MS = 2000;
const SMTP = { user: 'pipewright', password: 'smtp-password' };

let server: TestServer;
let receiver: WebhookReceiver;
let sink: SmtpSink;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  sink = await startSmtpSink(SMTP);
  server = await startTestServer({
    notifier: {
      maxAttempts: ATTEMPTS,
      firstRetryDelayMs: 50,
      attemptTimeoutMs: TIMEOUT_MS,
      pollIntervalMs: 20,
      smtp: {
        host: '127.0.0.1',
        port: sink.port,
        tls: 'off',
        user: SMTP.user,
        password: SMTP.password,
        from: 'pipewright@example.test',
      },
    },
  });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await sink?.close();
});

type Delivery = Schemas['NotificationDelivery'];

const FAILING = task('failing', { steps: [{ label: 'Break', code: 'exit 3' }] });
const PASSING = task('passing', { steps: [{ code: 'true' }] });

/**
 * A project with `main` (running `taskName`) notifying as `notifications` say, and its run;
 * `prepare` runs between the install and the run.
 */
async function runNotifying(
  taskName: 'failing' | 'passing',
  notifications: unknown[],
  prepare?: (client: ApiClient) => Promise<unknown>,
) {
  const { project, client } = await projectWith(server, [
    FAILING,
    PASSING,
    pipeline('main', [{ task: taskName }], { notifications }),
    command('go', ['main']),
  ]);
  await prepare?.(client);
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', 'go') } },
    body: {},
  });
  const pipelineId = data?.pipeline_ids[0] ?? '';
  return { project, client, pipelineId, pipeline: await finished(client, pipelineId) };
}

async function deliveriesOf(client: ApiClient, pipelineId: string): Promise<Delivery[]> {
  const { data } = await client.GET('/notification_deliveries', {
    params: { query: { pipeline_id: pipelineId } },
  });
  return data?.elements ?? [];
}

/** Waits (bounded) until no delivery of the pipeline is pending any more. */
const settled = (client: ApiClient, pipelineId: string) =>
  waitFor(
    () => deliveriesOf(client, pipelineId),
    (deliveries) => deliveries.length > 0 && deliveries.every((d) => d.status !== 'pending'),
  );

/** A path of the receiver no other test posts to, answering `answers`. */
function hook(answers?: Answer[]) {
  const path = uniqueName('hook');
  return { path, url: receiver.url(path, answers) };
}

const hmac = (key: string, body: string) => `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;

describe('listNotificationDeliveries', () => {
  it('posts a failed pipeline to its webhook, signed with its identity, and emails its addresses', async () => {
    const { path, url } = hook();
    const to = [`${uniqueName('ops')}@example.test`, `${uniqueName('dev')}@example.test`];
    const key = 'notification-signing-key-0123456789';
    const {
      project,
      client,
      pipelineId,
      pipeline: ended,
    } = await runNotifying('failing', [{ webhook: { url, identity: 'hooks' }, email: { to } }], (client) =>
      client.POST('/identities', { body: { name: 'hooks', kind: 'secret', data: { value: key } } }),
    );
    expect(ended.status).toBe('failed');

    const deliveries = await settled(client, pipelineId);
    const [post] = receiver.posts(path);
    if (!post) throw new Error('nothing posted');
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers['x-pipewright-signature-256']).toBe(hmac(key, post.body));
    const payload = JSON.parse(post.body) as Schemas['NotificationPayload'];
    expect(payload).toMatchObject({
      project_name: project.name,
      pipeline: { id: pipelineId, status: 'failed', name: 'main' },
      failed_tasks: [{ name: 'failing', failure_message: expect.stringContaining('Break') }],
    });
    expect(post.headers['x-pipewright-delivery']).toBe(payload.delivery_id);

    const email = sink.emails().find((e) => e.to.includes(to[0] ?? ''));
    expect(email).toMatchObject({ from: 'pipewright@example.test', to, user: SMTP.user });
    expect(email?.raw).toMatch(new RegExp(`Subject: \\[${project.name}\\] pipeline main failed`));
    expect(email?.raw).toContain(`Pipeline: ${pipelineId}`);

    const webhook = deliveries.find((d) => d.webhook);
    expect(webhook).toMatchObject({
      id: payload.delivery_id,
      pipeline_status: 'failed',
      webhook: { url, identity: 'hooks' },
      status: 'delivered',
      payload,
    });
    expect(webhook?.attempts).toEqual([
      {
        number: 1,
        start_time: expect.any(String),
        duration_ms: expect.any(Number),
        succeeded: true,
        status_code: 200,
      },
    ]);
    expect(deliveries.find((d) => d.email)).toMatchObject({
      email: { to },
      status: 'delivered',
      attempts: [{ number: 1, succeeded: true, status_code: 250 }],
    });
  });

  it('notifies a successful or aborted end only when a notification asks for it', async () => {
    const onFailure = hook();
    const onSuccess = hook();
    const { client, pipelineId } = await runNotifying('passing', [
      { webhook: { url: onFailure.url } },
      { on: ['successful', 'aborted'], webhook: { url: onSuccess.url } },
    ]);
    const [delivery] = await settled(client, pipelineId);
    expect(await deliveriesOf(client, pipelineId)).toHaveLength(1);
    expect(delivery).toMatchObject({ pipeline_status: 'successful', webhook: { url: onSuccess.url } });
    expect(receiver.posts(onSuccess.path)).toHaveLength(1);
    expect(receiver.posts(onFailure.path)).toHaveLength(0);
    // Unsigned without an identity.
    expect(receiver.posts(onSuccess.path)[0]?.headers['x-pipewright-signature-256']).toBeUndefined();

    const aborted = hook();
    const { project, client: other } = await projectWith(server, [
      task('slow', { steps: [{ code: 'sleep 60' }] }),
      pipeline('main', [{ task: 'slow' }], {
        notifications: [{ on: ['aborted'], webhook: { url: aborted.url } }],
      }),
      command('go', ['main']),
    ]);
    const { data } = await other.POST('/commands/id/{id}/execute', {
      params: { path: { id: await resourceId(other, 'command', 'go') } },
      body: {},
    });
    const abortedId = data?.pipeline_ids[0] ?? '';
    await other.POST('/pipelines/id/{id}/abort', { params: { path: { id: abortedId } } });
    const [abortNotice] = await settled(other, abortedId);
    expect(abortNotice).toMatchObject({
      project_id: project.id,
      pipeline_status: 'aborted',
      status: 'delivered',
    });
  });

  it('retries a receiver that answers 500, then 200, and shows both attempts', async () => {
    const { path, url } = hook([500, 200]);
    const { client, pipelineId } = await runNotifying('failing', [{ webhook: { url } }]);
    const [delivery] = await settled(client, pipelineId);
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: [
        { number: 1, succeeded: false, status_code: 500, error: 'the receiver answered 500' },
        { number: 2, succeeded: true, status_code: 200 },
      ],
    });
    expect(delivery?.end_time).toBeDefined();
    expect(delivery?.next_attempt_time).toBeUndefined();
    const posts = receiver.posts(path);
    expect(posts).toHaveLength(2);
    expect(posts[1]?.body).toBe(posts[0]?.body);
  });

  it('fails the attempts of a webhook whose identity the project lacks, saying so', async () => {
    const { path, url } = hook();
    const { client, pipelineId } = await runNotifying('failing', [{ webhook: { url, identity: 'absent' } }]);
    const [delivery] = await settled(client, pipelineId);
    expect(delivery?.status).toBe('failed');
    expect(delivery?.attempts).toHaveLength(ATTEMPTS);
    for (const attempt of delivery?.attempts ?? []) {
      expect(attempt).toMatchObject({
        succeeded: false,
        error: 'the webhook names identity "absent", which the project does not have',
      });
    }
    expect(receiver.posts(path)).toHaveLength(0);
  });

  it('times out a receiver that never answers, and gives up after the last attempt', async () => {
    const { path, url } = hook(['hang']);
    const { client, pipelineId } = await runNotifying('failing', [{ webhook: { url } }]);
    const [delivery] = await settled(client, pipelineId);
    expect(delivery?.status).toBe('failed');
    expect(delivery?.attempts).toHaveLength(ATTEMPTS);
    for (const attempt of delivery?.attempts ?? []) {
      expect(attempt).toMatchObject({
        succeeded: false,
        error: `no answer within ${TIMEOUT_MS / 1000} seconds`,
      });
      expect(attempt.status_code).toBeUndefined();
    }
    expect(receiver.posts(path)).toHaveLength(ATTEMPTS);
  });

  it('pages the deliveries of a project, filtered by status, and shows them to no other organization', async () => {
    const first = hook();
    const second = hook([500]);
    const { project, client, pipelineId } = await runNotifying('failing', [
      { webhook: { url: first.url } },
      { webhook: { url: second.url } },
    ]);
    await settled(client, pipelineId);
    const { data: page } = await client.GET('/notification_deliveries', { params: { query: { size: 1 } } });
    expect(page?.elements).toHaveLength(1);
    expect(page?.next).toBeDefined();
    const { data: failed } = await client.GET('/notification_deliveries', {
      params: { query: { status: 'failed' } },
    });
    expect(failed?.elements.map((d) => d.webhook?.url)).toEqual([second.url]);

    const stranger = server.client(await server.newOrganization(), project.id);
    const refused = await stranger.GET('/notification_deliveries', {}).catch((error: ApiError) => error);
    expect(refused).toMatchObject({ status: 404, code: 'unknown_project' });
  });
});

describe('notifications of pipeline resources', () => {
  it('refuses a notification without a webhook or an email, or with a bad URL or address', async () => {
    const { client: admin } = await projectWith(server, []);
    const { data: project } = await admin.POST('/projects', { body: { name: uniqueName('p') } });
    const refused = await admin
      .PUT('/projects/id/{id}/resources', {
        params: { path: { id: project?.id ?? '' } },
        body: {
          specs: [
            PASSING,
            pipeline('main', [{ task: 'passing' }], {
              notifications: [
                { on: ['failed'] },
                { webhook: { url: 'ftp://example.test/x' } },
                { email: { to: ['not an address'] } },
                { on: ['started'], email: { to: ['ops@example.test'] } },
              ],
            }),
          ] as Schemas['ResourceSpec'][],
        },
      })
      .catch((error: ApiError) => error);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_request_body' });
    const problems = ((refused as ApiError).data?.jsv_errors ?? []) as Schemas['JsvError'][];
    const pointers = problems.map((problem) => problem.pointer);
    expect(pointers).toEqual(
      expect.arrayContaining([
        '/specs/1/data/notifications/0',
        '/specs/1/data/notifications/1/webhook/url',
        '/specs/1/data/notifications/2/email/to/0',
        '/specs/1/data/notifications/3/on/0',
      ]),
    );
  });
});
