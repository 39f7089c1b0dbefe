import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

// Local stand-ins for what notifications reach, on 127.0.0.1 and ephemeral ports: a webhook
// receiver and an SMTP server. Nothing leaves the machine.

export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the receiver answers the posts to one path: a status, or `hang` (never). */
export type Answer = number | 'hang';

export interface WebhookReceiver {
  /** The URL of a path of its own, answering each post with the next of `answers` (the last one repeats). */
  url(path: string, answers?: Answer[]): string;
  /** The posts received on a path so far, first to last. */
  posts(path: string): ReceivedPost[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received = new Map<string, ReceivedPost[]>();
  const scripts = new Map<string, Answer[]>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const posts = received.get(path) ?? [];
      posts.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      received.set(path, posts);
      const script = scripts.get(path) ?? [200];
      const answer = script[Math.min(posts.length, script.length) - 1] ?? 200;
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url(path, answers = [200]) {
      scripts.set(`/${path}`, answers);
      return `http://127.0.0.1:${port}/${path}`;
    },
    posts: (path) => received.get(`/${path}`) ?? [],
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface ReceivedEmail {
  from: string;
  to: string[];
  /** The message as sent: headers, a blank line, the body. */
  raw: string;
  /** The AUTH user the client logged in as, if any. */
  user: string | undefined;
}

export interface SmtpSink {
  port: number;
  /** The emails received so far. */
  emails(): ReceivedEmail[];
  close(): Promise<void>;
}

/** An SMTP server that accepts every email (and the one user/password given) and keeps them. */
export async function startSmtpSink(credentials: { user: string; password: string }): Promise<SmtpSink> {
  const emails: ReceivedEmail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.password) {
        callback(null, { user: auth.username });
      } else callback(new Error('invalid credentials'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        emails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    emails: () => [...emails],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
