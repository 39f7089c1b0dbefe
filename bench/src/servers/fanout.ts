// Baseline of `streams`: node:http alone serving Server-Sent Events from the same database (the
// SQLite file given, or the PostgreSQL database of the URL given), the plain way. Every GET gets
// a stream; whenever another connection has committed, it reads the pipelines the change log
// names since, and writes each row as a message to every stream with `res.write`. It learns of
// commits as Pipewright's feed does: on SQLite, by a watch of the write-ahead log, and by checking
// `PRAGMA data_version` every 2 ms; on PostgreSQL, by listening on the channel every writing
// commit notifies. No authentication, filters, resume, heartbeats or limits.
import { watch } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';
import { COMMITS_CHANNEL } from '../lib/postgres-store.js';

const [target = ''] = process.argv.slice(2);
const CHANGED = `SELECT seq, id FROM changes WHERE seq > ? AND kind = 'pipeline' ORDER BY seq`;
const LATEST = 'SELECT max(seq) AS seq FROM changes';
const PIPELINE = 'SELECT * FROM pipelines WHERE id = ?';

const streams = new Set<ServerResponse>();
/** The last change sent. */
let after = 0;

/** Sends pipeline `row`, changed by change `seq`, to every stream. */
function send(seq: number, row: unknown) {
  after = seq;
  const message = `event: pipeline\nid: ${seq}\ndata: ${JSON.stringify(row)}\n\n`;
  for (const res of streams) res.write(message);
}

if (/^postgres(ql)?:\/\//.test(target)) {
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  await client.query(`LISTEN ${COMMITS_CHANNEL}`);
  after = Number((await client.query(LATEST)).rows[0]?.seq ?? 0);
  // One read after another: a commit told while one runs is read by the next.
  let reading = Promise.resolve();
  client.on('notification', () => {
    reading = reading.then(async () => {
      const changes = await client.query<{ seq: string; id: string }>(CHANGED.replace('?', '$1'), [after]);
      for (const change of changes.rows) {
        const pipeline = await client.query(PIPELINE.replace('?', '$1'), [change.id]);
        send(Number(change.seq), pipeline.rows[0]);
      }
    });
  });
} else {
  const db = new Database(target, { readonly: true });
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  const changedPipelines = db.prepare<[number], { seq: number; id: string }>(CHANGED);
  const pipeline = db.prepare<[string], Record<string, unknown>>(PIPELINE);
  let version = dataVersion.get();
  after = db.prepare<[], { seq: number | null }>(LATEST).get()?.seq ?? 0;
  const check = () => {
    const current = dataVersion.get();
    if (current === version) return;
    version = current;
    for (const change of changedPipelines.all(after)) send(change.seq, pipeline.get(change.id));
  };
  setInterval(check, 2);
  // Told when the write-ahead log is written, as ours is: a look on the next turn of the loop.
  watch(`${target}-wal`, { persistent: false }, () => setImmediate(check));
}

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
