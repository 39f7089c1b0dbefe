// Baseline: Express with the JSON parser and express-openapi-validator set up as Pipewright
// does, and handlers that answer a fixed body: the floor our own code adds to.
import type { AddressInfo } from 'node:net';
import { apiValidator } from '@pipewright/server';
import express from 'express';

const project = { id: '2Fw1aD5gHj8kLm2nPq4rSt6uVw8', org_id: '2Fv9zQx0bY3kLmN8pQrStUvWxYz', name: 'bench' };
const app = express();
app.use(express.json({ limit: 16 * 1024 * 1024 }));
// The validator exactly as Pipewright sets it up (resource specs are left to Pipewright's
// checks by type: the install baseline is the parse and the envelope's validation).
app.use(apiValidator(false));
app.get('/v0/status', (_req, res) => {
  res.json({});
});
app.get('/v0/projects/id/:id', (_req, res) => {
  res.json(project);
});
app.put('/v0/projects/id/:id/resources', (_req, res) => {
  res.status(204).end();
});
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(`${JSON.stringify({ message: 'listening', url: `http://127.0.0.1:${port}/v0` })}\n`);
});
