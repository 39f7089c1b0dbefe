import type { Schemas } from '@pipewright/types';
import { DomainError, invalidRequestBody } from '../domain/errors.js';
import type { Store } from '../store/index.js';
import type { PipelineService } from './pipelines.service.js';

type Project = Schemas['Project'];

/** Entries a scratchpad holds at most; values are bounded by the route's body limit. */
export const MAX_SCRATCHPAD_ENTRIES = 1000;

export function createScratchpadService(store: Store, pipelines: Pick<PipelineService, 'get'>) {
  const pipelineOf = pipelines.get;
  const unknownEntry = (key: string) =>
    new DomainError('unknown_scratchpad_entry', `no scratchpad entry ${JSON.stringify(key)}`, { key });

  return {
    entries: (project: Project, pipelineId: string) =>
      store.scratchpads.entries(pipelineOf(project, pipelineId).id),
    clear(project: Project, pipelineId: string): void {
      store.scratchpads.clear(pipelineOf(project, pipelineId).id);
    },
    get(project: Project, pipelineId: string, key: string): string {
      const value = store.scratchpads.get(pipelineOf(project, pipelineId).id, key);
      if (value === undefined) throw unknownEntry(key);
      return value;
    },
    set(project: Project, pipelineId: string, key: string, value: string): void {
      store.transaction(() => {
        const { id } = pipelineOf(project, pipelineId);
        const isNew = store.scratchpads.get(id, key) === undefined;
        if (isNew && store.scratchpads.size(id) >= MAX_SCRATCHPAD_ENTRIES) {
          throw invalidRequestBody([
            {
              pointer: '',
              reason: `the scratchpad already holds ${MAX_SCRATCHPAD_ENTRIES} entries, its limit`,
            },
          ]);
        }
        store.scratchpads.set(id, key, value);
      });
    },
    delete(project: Project, pipelineId: string, key: string): void {
      if (!store.scratchpads.delete(pipelineOf(project, pipelineId).id, key)) throw unknownEntry(key);
    },
  };
}
