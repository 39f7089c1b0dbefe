import type { Schemas } from '@pipewright/types';
import { DomainError, invalidRequestBody } from '../domain/errors.js';
import type { Store } from '../store/index.js';
import type { PipelineService } from './pipelines.service.js';

type Project = Schemas['Project'];

/** Entries a scratchpad holds at most; values are bounded by the route's body limit. */
export const MAX_SCRATCHPAD_ENTRIES = 1000;
/**
 * Bytes of keys and values (UTF-8) a scratchpad holds at most: what bounds the response of
 * getScratchpad, which returns them all at once (1000 entries of 64 KiB would be 65 MB).
 */
export const MAX_SCRATCHPAD_BYTES = 1024 * 1024;

const entryBytes = (key: string, value: string) => Buffer.byteLength(key) + Buffer.byteLength(value);

function scratchpadFull(reason: string) {
  return invalidRequestBody([{ pointer: '', reason }]);
}

export function createScratchpadService(store: Store, pipelines: Pick<PipelineService, 'get'>) {
  const pipelineOf = pipelines.get;
  const unknownEntry = (key: string) =>
    new DomainError('unknown_scratchpad_entry', `no scratchpad entry ${JSON.stringify(key)}`, { key });

  return {
    entries: async (project: Project, pipelineId: string) =>
      store.scratchpads.entries((await pipelineOf(project, pipelineId)).id),
    async clear(project: Project, pipelineId: string): Promise<void> {
      await store.scratchpads.clear((await pipelineOf(project, pipelineId)).id);
    },
    async get(project: Project, pipelineId: string, key: string): Promise<string> {
      const value = await store.scratchpads.get((await pipelineOf(project, pipelineId)).id, key);
      if (value === undefined) throw unknownEntry(key);
      return value;
    },
    async set(project: Project, pipelineId: string, key: string, value: string): Promise<void> {
      await store.transaction(async (tx) => {
        const { id } = await pipelineOf(project, pipelineId, tx);
        const previous = await tx.scratchpads.get(id, key);
        if (previous === undefined && (await tx.scratchpads.size(id)) >= MAX_SCRATCHPAD_ENTRIES) {
          throw scratchpadFull(`the scratchpad already holds ${MAX_SCRATCHPAD_ENTRIES} entries, its limit`);
        }
        const before = await tx.scratchpads.bytes(id);
        const after =
          before - (previous === undefined ? 0 : entryBytes(key, previous)) + entryBytes(key, value);
        // A write that does not grow the scratchpad always passes: one filled before the
        // limit existed can still be shrunk.
        if (after > MAX_SCRATCHPAD_BYTES && after > before) {
          throw scratchpadFull(
            `the scratchpad holds ${before} bytes of keys and values; this entry would bring it to ${after}, past its limit of ${MAX_SCRATCHPAD_BYTES}`,
          );
        }
        await tx.scratchpads.set(id, key, value);
      });
    },
    async delete(project: Project, pipelineId: string, key: string): Promise<void> {
      if (!(await store.scratchpads.delete((await pipelineOf(project, pipelineId)).id, key))) {
        throw unknownEntry(key);
      }
    },
  };
}
