import type { Transporter } from 'nodemailer';
import {
  DELIVERY_HEADER,
  emailMessage,
  type NotificationPayload,
  SIGNATURE_HEADER,
  signature,
} from '../domain/execution/notifications.js';
import type { AttemptResult } from '../services/index.js';

// How one attempt of a notification goes out: a webhook by HTTP, an email by SMTP. Each
// returns what came of it, never throws, and ends within its timeout.

/** The SMTP server the operator configures for emails. */
export interface SmtpOptions {
  host: string;
  port: number;
  /** `starttls`: plain connection upgraded, required; `tls`: TLS from the start (465); `off`: none. */
  tls: 'starttls' | 'tls' | 'off';
  user?: string | undefined;
  password?: string | undefined;
  /** The sender's address (`From`). */
  from: string;
}

const seconds = (ms: number) => `${ms / 1000} second${ms === 1000 ? '' : 's'}`;

/** The words of a failed connection: the system's reason (ECONNREFUSED...) rather than "fetch failed". */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}

/**
 * Posts `body` to `url`, signed when the project has a secret. Success is a 2xx answer; a
 * redirection is not followed (a notification's URL says where it goes).
 */
export async function postWebhook(
  url: string,
  body: string,
  deliveryId: string,
  secret: string | undefined,
  timeoutMs: number,
): Promise<AttemptResult> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Pipewright-Notifications',
        [DELIVERY_HEADER]: deliveryId,
        ...(secret === undefined ? {} : { [SIGNATURE_HEADER]: signature(secret, body) }),
      },
      body,
    });
    // The answer's body says nothing the attempt records: not read, its connection freed.
    await response.body?.cancel();
    const succeeded = response.status >= 200 && response.status < 300;
    return {
      succeeded,
      status_code: response.status,
      ...(succeeded ? {} : { error: `the receiver answered ${response.status}` }),
    };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    return { succeeded: false, error: timedOut ? `no answer within ${seconds(timeoutMs)}` : reasonOf(error) };
  }
}

export type EmailSender = (to: string[], payload: NotificationPayload) => Promise<AttemptResult>;

/** The reply code at the start of an SMTP server's reply (`250 2.0.0 Ok`). */
const replyCode = (reply: unknown) => {
  const match = typeof reply === 'string' ? /^(\d{3})/.exec(reply) : null;
  return match ? { status_code: Number(match[1]) } : {};
};

/** Sends notification emails through the operator's SMTP server, one connection per email. */
export function createEmailSender(smtp: SmtpOptions, timeoutMs: number): EmailSender {
  // Made at the first email, with nodemailer loaded then: a server that sends none spares its load at start.
  let transport: Promise<Transporter> | undefined;
  const connect = async () =>
    (await import('nodemailer')).createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.tls === 'tls',
      requireTLS: smtp.tls === 'starttls',
      ignoreTLS: smtp.tls === 'off',
      ...(smtp.user === undefined ? {} : { auth: { user: smtp.user, pass: smtp.password ?? '' } }),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
  return async (to, payload) => {
    transport ??= connect();
    const { subject, text } = emailMessage(payload);
    let timer: NodeJS.Timeout | undefined;
    // Each of the transport's timeouts bounds one wait; this bounds the whole attempt.
    const timeout = new Promise<AttemptResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ succeeded: false, error: `no answer within ${seconds(timeoutMs)}` }),
        timeoutMs,
      );
    });
    const send = (await transport)
      .sendMail({ from: smtp.from, to, subject, text, headers: { [DELIVERY_HEADER]: payload.delivery_id } })
      .then(
        (info): AttemptResult => ({ succeeded: true, ...replyCode(info.response) }),
        (error: { responseCode?: number; message?: string }): AttemptResult => ({
          succeeded: false,
          ...(error.responseCode === undefined ? {} : { status_code: error.responseCode }),
          error: reasonOf(error),
        }),
      );
    try {
      return await Promise.race([send, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Where no SMTP server is configured: every email fails at once, for good, and says why. */
export const NO_EMAIL: EmailSender = async () => ({
  succeeded: false,
  final: true,
  error: 'the server has no SMTP server configured (--smtp-host)',
});
