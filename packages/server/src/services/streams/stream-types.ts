import type { Schemas } from '@pipewright/types';
import type { Principal } from '../../domain/principal.js';

/** Why the server ends a stream (`end` event); the spec's StreamEnd lists the same. */
export type EndReason = Schemas['StreamEnd']['data']['reason'];

/** One message of a stream: its event type, its id (where a resume continues), its data as JSON. */
export interface StreamMessage {
  event: 'start' | 'pipeline' | 'task' | 'event' | 'output' | 'end';
  id: string;
  data: string;
}

/** Where a stream's messages go: the HTTP response, which frames them. */
export interface StreamSink {
  /** Sends a message; false once the consumer has fallen too far behind and was cut off. */
  send(message: StreamMessage): boolean;
  /** Sends messages together, in one write to the connection; false as `send`, and then none went. */
  sendAll(messages: readonly StreamMessage[]): boolean;
  /** Resolves once what was sent has left the server's buffers (or the consumer is gone). */
  drained(): Promise<void>;
  /** Ends the response, after the messages sent. */
  close(): void;
}

/** A stream as its opener holds it. */
export interface OpenStream {
  /** Where a consumer that reconnected now would resume: the id its heartbeats carry. */
  position(): string;
  /** Sends `end` with the reason, and closes. */
  end(reason: EndReason): void;
  /** The consumer went away: forget the stream. */
  close(): void;
}

/** What every stream is opened with. */
export interface StreamRequest {
  principal: Principal;
  project: Schemas['Project'];
  /** The id the consumer last received (Last-Event-ID), when it reconnects. */
  lastEventId?: string | undefined;
  /** Whether the key that opened the stream is still valid: checked when access may have changed. */
  stillAuthorized: () => Promise<boolean>;
}
