import { type ServerSentEvent, serverSentEvents } from '@pipewright/client';
import { describe, expect, it } from 'vitest';

// The client's reader of text/event-stream, on bodies cut anywhere: what every stream helper reads.

/** A body made of `chunks`, each a read of its own. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[]) {
  const ids: string[] = [];
  const events: ServerSentEvent[] = [];
  for await (const event of serverSentEvents(body(chunks), (id) => ids.push(id))) events.push(event);
  return { events, ids };
}

describe('serverSentEvents', () => {
  it.each([
    ['LF', ['event: task\nid: 7\ndata: {"a":1}\n\n']],
    ['CRLF split between reads', ['event: task\r', '\nid: 7\r\ndata: {"a":1}\r\n\r', '\n']],
    ['CR alone', ['event: task\rid: 7\rdata: {"a":1}\r\r']],
    ['no space after the colon, a comment between', ['event:task\n: heartbeat\nid:7\ndata:{"a":1}\n\n']],
  ])('reads an event whose lines end with %s', async (_name, chunks) => {
    expect(await read(chunks)).toEqual({ events: [{ event: 'task', data: '{"a":1}', id: '7' }], ids: ['7'] });
  });

  it('takes an id without data (a heartbeat) as the last id, without an event', async () => {
    const { events, ids } = await read(['data: x\nid: 1\n\n', ': heartbeat\nid: 5\n\n', 'data: y\n\n']);
    expect(events).toEqual([
      { event: 'message', data: 'x', id: '1' },
      { event: 'message', data: 'y', id: '5' },
    ]);
    expect(ids).toEqual(['1', '5']);
  });

  it('joins data lines, decodes characters split between reads, and drops an event cut short', async () => {
    const bytes = new TextEncoder().encode('data: é\ndata: b\n\ndata: cut');
    const split = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    const events: ServerSentEvent[] = [];
    for await (const event of serverSentEvents(split, () => undefined)) events.push(event);
    expect(events).toEqual([{ event: 'message', data: 'é\nb', id: undefined }]);
  });
});
