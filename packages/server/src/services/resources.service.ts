import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError, invalidRequestBody, type JsvError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { pointer } from '../domain/json-pointer.js';
import type { Principal } from '../domain/principal.js';
import { planInstallation } from '../domain/resource-diff.js';
import { checkResourceSet, type SetEntry } from '../domain/resource-set.js';
import { formatTime } from '../domain/time.js';
import type { Store } from '../store/index.js';
import type { createProjectService } from './projects.service.js';
import { createSpecValidator } from './resource-spec-schemas.js';
import { timeSlicer } from './time-slices.js';
import type { ScheduleNotifier } from './work.js';

type Project = Schemas['Project'];
type Resource = Schemas['Resource'];
type ResourceSpec = Schemas['ResourceSpec'];
type ResourceType = ResourceSpec['type'];

export interface InstallOptions {
  /** Validate only: change nothing. */
  dryRun: boolean;
}

function unknownResource(description: string, data: Record<string, string>): DomainError {
  return new DomainError('unknown_resource', `no resource with ${description} in the project`, data);
}

/** The spec index of a pointer into the request body (`/specs/7/...` is 7). */
const specIndexOf = (jsvError: JsvError) => Number(jsvError.pointer.split('/')[2]);

export function createResourceService(
  store: Store,
  projects: ReturnType<typeof createProjectService>,
  clock: () => Date,
  schedules: ScheduleNotifier,
) {
  // Compiled at the first install, not at start: a restart listens sooner.
  let compiled: ReturnType<typeof createSpecValidator> | undefined;

  /**
   * The set as valid specs, or every problem of it at once, ordered by spec; validated a slice
   * of the event loop at a time (a set may have 10,000 specs).
   */
  async function validateSet(set: readonly unknown[]): Promise<ResourceSpec[]> {
    compiled ??= createSpecValidator();
    const specs = compiled;
    const ownProblems: JsvError[] = [];
    const entries: SetEntry[] = [];
    const yieldSometimes = timeSlicer();
    for (const [index, spec] of set.entries()) {
      await yieldSometimes();
      const at = pointer('', 'specs', index);
      const own = specs.validate(spec);
      for (const problem of own) ownProblems.push({ ...problem, pointer: `${at}${problem.pointer}` });
      const { type, name } = (spec ?? {}) as { type?: unknown; name?: unknown };
      if (specs.types.has(type as string) && typeof name === 'string') {
        const valid = own.length === 0 ? (spec as ResourceSpec) : undefined;
        entries.push({ index, type: type as ResourceType, name, spec: valid });
      }
    }
    // Spread into an array, not into push(): a broken set of 10,000 specs has many problems.
    const problems = [...ownProblems, ...checkResourceSet(entries)];
    if (problems.length > 0) {
      throw invalidRequestBody(problems.sort((a, b) => specIndexOf(a) - specIndexOf(b)));
    }
    return set as ResourceSpec[];
  }

  return {
    /**
     * Makes the resources of the project exactly `set`: validated whole first, then applied
     * in one IMMEDIATE transaction, so concurrent installations into a project serialize and
     * each one diffs against what the previous one left. A change to triggers then wakes the
     * ticker, so that a new or changed schedule ticks on its own time, not at the next pass.
     */
    async install(
      principal: Principal,
      projectId: string,
      set: readonly unknown[],
      options: InstallOptions,
    ): Promise<void> {
      const project = projects.get(principal, projectId);
      const valid = await validateSet(set);
      if (options.dryRun) return;
      const now = clock();
      const time = formatTime(now);
      const triggersChanged = store.transaction(() => {
        // Looked up again: the project may have been deleted while the set was validated.
        projects.get(principal, projectId);
        const installed = store.resources.installed(project.id);
        const plan = planInstallation(installed, valid);
        for (const id of plan.delete) store.resources.delete(id);
        for (const { id, spec } of plan.update) store.resources.updateSpec(id, spec, time);
        for (const spec of plan.create) {
          store.resources.insert({
            id: newId(now),
            org_id: project.org_id,
            project_id: project.id,
            creation_time: time,
            spec,
          });
        }
        const triggers = new Set(
          installed.filter((resource) => resource.type === 'trigger').map((r) => r.id),
        );
        return (
          plan.create.some((spec) => spec.type === 'trigger') ||
          plan.update.some(({ id }) => triggers.has(id)) ||
          plan.delete.some((id) => triggers.has(id))
        );
      });
      if (triggersChanged) schedules.schedulesChanged();
    },
    list(project: Project, type: ResourceType | undefined, request: PageRequest): Page<Resource> {
      return store.resources.list(project.id, type, request);
    },
    get(project: Project, id: string): Resource {
      const resource = store.resources.get(project.id, id);
      if (!resource) throw unknownResource(`id ${id}`, { id });
      return resource;
    },
    getByTypeAndName(project: Project, type: ResourceType, name: string): Resource {
      const resource = store.resources.getByTypeAndName(project.id, type, name);
      if (!resource) throw unknownResource(`type ${type} and name ${name}`, { type, name });
      return resource;
    },
  };
}
