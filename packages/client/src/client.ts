import type { paths } from '@pipewright/types';
import createFetchClient, { type Client } from 'openapi-fetch';
import { Agent } from 'undici';
import { ApiError } from './errors.js';

export interface ClientOptions {
  /** Where the server is, without the version: `https://localhost:8443`. */
  baseUrl: string;
  apiKey: string;
  /** Sent as X-Service-Project-Id unless a request sets the header itself. */
  projectId?: string;
  /** PEM certificate(s) to trust, e.g. the server's self-signed certificate. */
  ca?: string | Buffer;
}

type ProjectHeader = { 'X-Service-Project-Id': string };

/** An operation whose project header becomes optional: the client sends it itself. */
type ProjectHeaderOptional<Operation> = Operation extends { parameters: { header: ProjectHeader } }
  ? Omit<Operation, 'parameters'> & {
      parameters: Omit<Operation['parameters'], 'header'> & { header?: Partial<ProjectHeader> };
    }
  : Operation;

/** The generated paths as this client sees them. */
export type ClientPaths = {
  [Path in keyof paths]: { [Method in keyof paths[Path]]: ProjectHeaderOptional<paths[Path][Method]> };
};

export type ApiClient = Client<ClientPaths, `${string}/${string}`>;

/**
 * A typed client of API v0 (openapi-fetch over the generated paths). Every call resolves
 * to `{ data, response }` on success and rejects with an ApiError otherwise.
 */
export function createClient(options: ClientOptions): ApiClient {
  const dispatcher = options.ca ? new Agent({ connect: { ca: options.ca } }) : undefined;
  const client = createFetchClient<ClientPaths>({
    baseUrl: `${options.baseUrl.replace(/\/+$/, '')}/v0`,
    ...(dispatcher ? { requestInitExt: { dispatcher } } : {}),
  });
  client.use({
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${options.apiKey}`);
      if (options.projectId && !request.headers.has('X-Service-Project-Id')) {
        request.headers.set('X-Service-Project-Id', options.projectId);
      }
      return request;
    },
    async onResponse({ response }) {
      if (!response.ok) throw await ApiError.from(response);
      return response;
    },
  });
  return client;
}
