// Baseline: Express with the JSON parser and express-openapi-validator on the same spec as
// Pipewright, and handlers that answer a fixed body: the floor our own code adds to.
import type { AddressInfo } from 'node:net';
import { openapiDocument } from '@pipewright/types';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';

const project = { id: '2Fw1aD5gHj8kLm2nPq4rSt6uVw8', org_id: '2Fv9zQx0bY3kLmN8pQrStUvWxYz', name: 'bench' };
const app = express();
app.use(express.json({ limit: 16 * 1024 * 1024 }));
app.use(
  OpenApiValidator.middleware({
    apiSpec: structuredClone(openapiDocument) as never,
    validateApiSpec: false,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
    validateResponses: false,
    validateSecurity: false,
    // Its oneOf over resource specs cannot validate them (Pipewright checks each spec by its
    // type instead): the install baseline is the JSON parse alone.
    ignorePaths: /\/resources$/,
  }),
);
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
