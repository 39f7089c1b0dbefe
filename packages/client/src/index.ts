export type { components, operations, paths, Schemas } from '@pipewright/types';
export { type ApiClient, type ClientOptions, createClient } from './client.js';
export { ApiError } from './errors.js';
export { type ElementOf, type ListPath, type ListQuery, walk } from './pages.js';
export { getScratchpadEntry, setScratchpadEntry } from './scratchpad.js';
