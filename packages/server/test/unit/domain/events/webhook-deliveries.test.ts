import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  deliveryFingerprints,
  deliveryKind,
  proofProblem,
  type WebhookDelivery,
  type WebhookSender,
} from '../../../../src/domain/events/webhook-deliveries.js';
import { pathBucket } from '../../../../src/http/public-routes.js';

const SECRET = 'the-secret-of-the-webhook';
const BODY = '{"object_kind":"push","ref":"refs/heads/main"}';
const signature = createHmac('sha256', SECRET).update(BODY).digest('hex');

/** A delivery of BODY with these headers (names in any case, as HTTP has them). */
function delivery(headers: Record<string, string>, body = BODY): WebhookDelivery {
  const lower = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  return { body: Buffer.from(body), data: JSON.parse(body), header: (name) => lower[name.toLowerCase()] };
}

describe('proofProblem', () => {
  it.each<[string, WebhookSender, Record<string, string>, { header: string; missing: boolean } | undefined]>([
    ['github, signed', 'github', { 'X-Hub-Signature-256': `sha256=${signature}` }, undefined],
    [
      'github, in capitals',
      'github',
      { 'X-Hub-Signature-256': `sha256=${signature.toUpperCase()}` },
      undefined,
    ],
    [
      'github, without its prefix',
      'github',
      { 'X-Hub-Signature-256': signature },
      { header: 'X-Hub-Signature-256', missing: false },
    ],
    [
      'github, a signature cut short',
      'github',
      { 'X-Hub-Signature-256': `sha256=${signature.slice(2)}` },
      { header: 'X-Hub-Signature-256', missing: false },
    ],
    ['github, unsigned', 'github', {}, { header: 'X-Hub-Signature-256', missing: true }],
    [
      'github, an empty header',
      'github',
      { 'X-Hub-Signature-256': '' },
      { header: 'X-Hub-Signature-256', missing: true },
    ],
    ['gitlab, the token', 'gitlab', { 'X-Gitlab-Token': SECRET }, undefined],
    [
      'gitlab, the token and more',
      'gitlab',
      { 'X-Gitlab-Token': `${SECRET}x` },
      { header: 'X-Gitlab-Token', missing: false },
    ],
    [
      'gitlab, a signature instead',
      'gitlab',
      { 'X-Hub-Signature-256': `sha256=${signature}` },
      { header: 'X-Gitlab-Token', missing: true },
    ],
    ['generic, bare', 'generic', { 'X-Signature-256': signature }, undefined],
    ['generic, prefixed', 'generic', { 'X-Signature-256': `sha256=${signature}` }, undefined],
    [
      'generic, with another prefix',
      'generic',
      { 'X-Signature-256': `sha1=${signature}` },
      { header: 'X-Signature-256', missing: false },
    ],
  ])('%s', (_case, sender, headers, problem) => {
    expect(proofProblem(sender, SECRET, delivery(headers))).toEqual(problem);
  });

  it('refuses the signature of another body', () => {
    const other = delivery({ 'X-Signature-256': signature }, '{"ref":"refs/heads/dev"}');
    expect(proofProblem('generic', SECRET, other)).toEqual({ header: 'X-Signature-256', missing: false });
  });
});

describe('deliveryFingerprints', () => {
  it('are the hash of the body, and of the identifier the sender gives', () => {
    const [body, ...rest] = deliveryFingerprints('github', delivery({ 'X-GitHub-Delivery': 'd-1' }));
    expect(body).toMatch(/^body:[0-9a-f]{64}$/);
    expect(rest).toEqual([expect.stringMatching(/^id:[0-9a-f]{64}$/)]);
    expect(deliveryFingerprints('gitlab', delivery({ 'X-Gitlab-Event-UUID': 'd-1' }))).toEqual([
      body,
      rest[0],
    ]);
    // A generic sender has no identifier, nor does a delivery that lacks one.
    expect(deliveryFingerprints('generic', delivery({ 'X-GitHub-Delivery': 'd-1' }))).toEqual([body]);
    expect(deliveryFingerprints('github', delivery({}))).toEqual([body]);
    expect(deliveryFingerprints('github', delivery({}, `${BODY} `))[0]).not.toBe(body);
  });
});

describe('deliveryKind', () => {
  it.each<[WebhookSender, Record<string, string>, string, string | undefined]>([
    ['github', { 'X-GitHub-Event': 'ping' }, 'push', 'ping'],
    ['github', {}, 'push', undefined],
    ['gitlab', { 'X-Gitlab-Event': 'Tag Push Hook' }, 'tag_push', 'push'],
    ['generic', { 'X-GitHub-Event': 'ping' }, 'deploy', 'deploy'],
  ])('of a %s delivery with %j, for a trigger of %s, is %s', (sender, headers, event, kind) => {
    expect(deliveryKind(sender, delivery(headers), event)).toBe(kind);
  });
});

describe('pathBucket', () => {
  it('is the same for every spelling of a path', () => {
    const bucket = pathBucket('/v0/hooks/abc');
    expect(pathBucket('/v0/hooks/abc/')).toBe(bucket);
    expect(pathBucket('/v0/hooks/%61bc')).toBe(bucket);
    expect(pathBucket('/v0/hooks/abd')).not.toBe(bucket);
    expect(pathBucket('/v0/hooks/%ZZ')).toBe('path /v0/hooks/%ZZ');
  });
});
