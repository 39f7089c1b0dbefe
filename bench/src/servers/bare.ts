// Baseline: node:http alone answering GET /v0/projects/id/{id} with the same read as
// Pipewright, in the same database (the SQLite file given, or the PostgreSQL database of the
// URL given), and GET /v0/status with {}. No authentication, validation or logging.
import { createServer, type ServerResponse } from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';

const [target = ''] = process.argv.slice(2);
const SQL = 'SELECT * FROM projects WHERE id = ?';

/** The project of `id`, read synchronously from SQLite, or over a pool of PostgreSQL connections. */
let byId: (id: string) => unknown;
if (/^postgres(ql)?:\/\//.test(target)) {
  // As many connections as the load has (10), so that no request waits for one.
  const pool = new pg.Pool({ connectionString: target, max: 10 });
  byId = async (id) => (await pool.query(SQL.replace('?', '$1'), [id])).rows[0];
} else {
  const statement = new Database(target, { readonly: true }).prepare(SQL);
  byId = (id) => statement.get(id);
}

function answer(res: ServerResponse, body: unknown) {
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? { error: 'not found' }));
}

createServer((req, res) => {
  const match = /^\/v0\/projects\/id\/([0-9A-Za-z]{27})$/.exec(req.url ?? '');
  const found = match ? byId(match[1] as string) : req.url === '/v0/status' ? {} : undefined;
  if (!(found instanceof Promise)) return answer(res, found);
  found.then(
    (body) => answer(res, body),
    () => {
      res.writeHead(500).end();
    },
  );
}).listen(0, '127.0.0.1', function (this: import('node:net').Server) {
  const address = this.address() as import('node:net').AddressInfo;
  process.stderr.write(
    `${JSON.stringify({ message: 'listening', url: `http://127.0.0.1:${address.port}/v0` })}\n`,
  );
});
