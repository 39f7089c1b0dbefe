import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Who posts a webhook's deliveries, which says how they are signed, identified and of what kind. */
export type WebhookSender = 'github' | 'gitlab' | 'generic';

/** A delivery as it came. */
export interface WebhookDelivery {
  /** The body's bytes: signatures are computed over them, not over the parsed data. */
  body: Buffer;
  /** The body parsed, a JSON object. */
  data: Record<string, unknown>;
  /** The value of a header, by its name in any case. */
  header(name: string): string | undefined;
}

/** How long a delivery is remembered: the same one again within it is a replay. */
export const REPLAY_WINDOW_MS = 24 * 3_600_000;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest();

// A signature in hexadecimal, after `sha256=` (GitHub's form), or with the prefix optional.
const HEX_SIGNATURE = {
  prefixed: /^sha256=([0-9a-fA-F]{64})$/,
  either: /^(?:sha256=)?([0-9a-fA-F]{64})$/,
};

/**
 * Whether `signature` is the HMAC-SHA256 of `body` keyed with `secret`, written as `form`
 * says. The comparison takes the same time wherever the two differ.
 */
function hmacProves(
  signature: string,
  secret: string,
  body: Buffer,
  form: keyof typeof HEX_SIGNATURE,
): boolean {
  const hex = HEX_SIGNATURE[form].exec(signature.trim())?.[1];
  if (hex === undefined) return false;
  return timingSafeEqual(Buffer.from(hex, 'hex'), createHmac('sha256', secret).update(body).digest());
}

interface SenderRules {
  /** The header that proves the sender knows the secret. */
  proofHeader: string;
  proves(proof: string, secret: string, body: Buffer): boolean;
  /** The header that identifies a delivery, when the sender sends one. */
  deliveryHeader?: string;
  /** The kind of event of a delivery; without it, every delivery is of the trigger's event. */
  kindOf?(delivery: WebhookDelivery): string | undefined;
}

const SENDERS: Record<WebhookSender, SenderRules> = {
  github: {
    proofHeader: 'X-Hub-Signature-256',
    proves: (proof, secret, body) => hmacProves(proof, secret, body, 'prefixed'),
    deliveryHeader: 'X-GitHub-Delivery',
    kindOf: (delivery) => delivery.header('X-GitHub-Event'),
  },
  gitlab: {
    proofHeader: 'X-Gitlab-Token',
    // The token is the secret itself: their hashes are compared, so that the time taken tells
    // nothing of the secret's length either.
    proves: (proof, secret) => timingSafeEqual(sha256(proof), sha256(secret)),
    deliveryHeader: 'X-Gitlab-Event-UUID',
    kindOf: (delivery) => {
      const kind = delivery.data.object_kind;
      return typeof kind === 'string' ? kind : undefined;
    },
  },
  generic: {
    proofHeader: 'X-Signature-256',
    proves: (proof, secret, body) => hmacProves(proof, secret, body, 'either'),
  },
};

/**
 * Why the delivery does not prove that its sender knows `secret`, or undefined when it does:
 * the header that must carry the proof, and whether it is missing or wrong.
 */
export function proofProblem(
  sender: WebhookSender,
  secret: string,
  delivery: WebhookDelivery,
): { header: string; missing: boolean } | undefined {
  const { proofHeader, proves } = SENDERS[sender];
  const proof = delivery.header(proofHeader);
  if (proof === undefined || proof === '') return { header: proofHeader, missing: true };
  return proves(proof, secret, delivery.body) ? undefined : { header: proofHeader, missing: false };
}

/**
 * What identifies a delivery, to tell a replay: the hash of its body, and of its identifier
 * when the sender gives one. The identifier alone would not do: no signature covers it, so a
 * replay could come with a new one; the body is signed.
 */
export function deliveryFingerprints(sender: WebhookSender, delivery: WebhookDelivery): string[] {
  const { deliveryHeader } = SENDERS[sender];
  const id = deliveryHeader === undefined ? undefined : delivery.header(deliveryHeader);
  const body = `body:${sha256(delivery.body).toString('hex')}`;
  return id ? [body, `id:${sha256(id).toString('hex')}`] : [body];
}

/** The kind of event of a delivery, as its sender says it; `fallback` when the sender does not. */
export function deliveryKind(
  sender: WebhookSender,
  delivery: WebhookDelivery,
  fallback: string,
): string | undefined {
  const { kindOf } = SENDERS[sender];
  return kindOf ? kindOf(delivery) : fallback;
}
