export type { components, operations, paths, Schemas } from '@pipewright/types';
export { type ApiClient, type ClientOptions, createClient } from './client.js';
export { ApiError } from './errors.js';
export { type ServerSentEvent, serverSentEvents } from './event-stream.js';
export { type ElementOf, type ListPath, type ListQuery, walk } from './pages.js';
export { getScratchpadEntry, setScratchpadEntry } from './scratchpad.js';
export {
  type ChangeFilters,
  type ProjectChange,
  projectChanges,
  type StreamOptions,
  type TaskOutputMessage,
  taskOutput,
} from './streams.js';
