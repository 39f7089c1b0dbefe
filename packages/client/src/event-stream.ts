/** One event of a Server-Sent Events stream, its data not parsed yet. */
export interface ServerSentEvent {
  event: string;
  data: string;
  /** The last event id as it stands at this event (an event without `id` keeps the previous one). */
  id: string | undefined;
}

/**
 * Reads a `text/event-stream` body as the WHATWG HTML standard says (lines ended by CR, LF or
 * CRLF; `field: value`; a blank line dispatches; comments and unknown fields ignored), calling
 * `onId` whenever the last event id changes, even by a message without data (a heartbeat), and
 * yielding the events that have data.
 */
export async function* serverSentEvents(
  body: ReadableStream<Uint8Array>,
  onId: (id: string) => void,
  signal?: AbortSignal,
): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let lastId: string | undefined;
  let event = '';
  let data: string[] = [];
  let idChanged = false;

  function* lines(final: boolean): Generator<string> {
    for (;;) {
      const end = buffer.search(/[\r\n]/);
      if (end < 0) break;
      // A CR at the end of what was read may be the first half of a CRLF: wait for more.
      if (buffer[end] === '\r' && end === buffer.length - 1 && !final) break;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      yield line;
    }
  }

  function dispatch(): ServerSentEvent | undefined {
    if (idChanged && lastId !== undefined) onId(lastId);
    idChanged = false;
    const dispatched =
      data.length > 0 ? { event: event || 'message', data: data.join('\n'), id: lastId } : undefined;
    event = '';
    data = [];
    return dispatched;
  }

  function field(line: string): void {
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
    else if (name === 'id' && !value.includes('\0')) {
      idChanged ||= value !== lastId;
      lastId = value;
    }
  }

  const reader = body.getReader();
  // fetch cannot cancel a body whose reader is taken: an abort while the caller holds an event
  // (between two reads) would leave the connection open.
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (const line of lines(done)) {
        if (line !== '') {
          field(line);
          continue;
        }
        const dispatched = dispatch();
        if (dispatched) yield dispatched;
      }
      // What follows the last blank line is an event cut short: dropped, as the standard says.
      if (done) return;
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    // Also when the caller stops reading early: the connection is closed, not left open.
    await reader.cancel().catch(() => undefined);
  }
}
