// Baseline of `streams`: node:http alone serving Server-Sent Events from the same database, the
// plain way. Every GET gets a stream; every 2 ms (as Pipewright's feed) it checks whether another
// connection committed (`PRAGMA data_version`), reads the pipelines the change log names since,
// and writes each row as a message to every stream with `res.write`. No authentication, filters,
// resume, heartbeats or limits.
import { createServer, type ServerResponse } from 'node:http';
import Database from 'better-sqlite3';

const [file] = process.argv.slice(2);
const db = new Database(file ?? '', { readonly: true });
const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
const changedPipelines = db.prepare<[number], { seq: number; id: string }>(
  `SELECT seq, id FROM changes WHERE seq > ? AND kind = 'pipeline' ORDER BY seq`,
);
const latestChange = db.prepare<[], number | null>('SELECT max(seq) FROM changes').pluck();
const pipeline = db.prepare<[string], Record<string, unknown>>('SELECT * FROM pipelines WHERE id = ?');

const streams = new Set<ServerResponse>();
let version = dataVersion.get();
let after = latestChange.get() ?? 0;

setInterval(() => {
  const current = dataVersion.get();
  if (current === version) return;
  version = current;
  for (const change of changedPipelines.all(after)) {
    after = change.seq;
    const message = `event: pipeline\nid: ${change.seq}\ndata: ${JSON.stringify(pipeline.get(change.id))}\n\n`;
    for (const res of streams) res.write(message);
  }
}, 2);

createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write(`event: start\nid: ${after}\ndata: {}\n\n`);
  streams.add(res);
  req.socket.on('close', () => streams.delete(res));
}).listen(0, '127.0.0.1', function (this: import('node:net').Server) {
  const address = this.address() as import('node:net').AddressInfo;
  process.stderr.write(
    `${JSON.stringify({ message: 'listening', url: `http://127.0.0.1:${address.port}/v0` })}\n`,
  );
});
