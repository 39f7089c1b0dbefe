import { readFileSync } from 'node:fs';

export type { components, operations, paths } from './generated/api.js';

import type { components } from './generated/api.js';

/** Every schema of the spec, by name: `Schemas['Project']`. */
export type Schemas = components['schemas'];

/** The bundled OpenAPI document (refs between files resolved, internal refs kept). */
export const openapiDocument: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('./generated/openapi.json', import.meta.url), 'utf8'),
);
