// Baseline: node:http alone answering GET /v0/projects/id/{id} with the same SQLite read
// as Pipewright, and GET /v0/status with {}. No authentication, validation or logging.
import { createServer } from 'node:http';
import Database from 'better-sqlite3';

const [file] = process.argv.slice(2);
const db = new Database(file ?? '', { readonly: true });
const byId = db.prepare('SELECT * FROM projects WHERE id = ?');

createServer((req, res) => {
  const match = /^\/v0\/projects\/id\/([0-9A-Za-z]{27})$/.exec(req.url ?? '');
  const body = match ? byId.get(match[1]) : req.url === '/v0/status' ? {} : undefined;
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? { error: 'not found' }));
}).listen(0, '127.0.0.1', function (this: import('node:net').Server) {
  const address = this.address() as import('node:net').AddressInfo;
  process.stderr.write(
    `${JSON.stringify({ message: 'listening', url: `http://127.0.0.1:${address.port}/v0` })}\n`,
  );
});
