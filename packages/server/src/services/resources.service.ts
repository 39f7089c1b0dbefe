import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError, invalidRequestBody, type JsvError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { pointer } from '../domain/json-pointer.js';
import type { Principal } from '../domain/principal.js';
import { type InstallationPlan, installationPlanner } from '../domain/resource-diff.js';
import { checkResourceSet, type SetEntry } from '../domain/resource-set.js';
import { formatTime } from '../domain/time.js';
import type { StagedChange, Store } from '../store/index.js';
import { oneAtATimePerKey } from './one-at-a-time.js';
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

/** How many installed resources are compared, and changes staged, between turns of the event loop. */
const BATCH = 500;

/** The spec index of a pointer into the request body (`/specs/7/...` is 7). */
const specIndexOf = (jsvError: JsvError) => Number(jsvError.pointer.split('/')[2]);

export function createResourceService(
  store: Store,
  projects: ReturnType<typeof createProjectService>,
  clock: () => Date,
  schedules: ScheduleNotifier,
) {
  // Compiled by `prepare`, once the server listens (a restart listens sooner), or else at the
  // first install.
  let compiled: ReturnType<typeof createSpecValidator> | undefined;
  const specValidator = () => {
    compiled ??= createSpecValidator();
    return compiled;
  };

  /**
   * The set as valid specs, or every problem of it at once, ordered by spec; validated a slice
   * of the event loop at a time (a set may have 10,000 specs).
   */
  async function validateSet(set: readonly unknown[]): Promise<ResourceSpec[]> {
    const specs = specValidator();
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

  /**
   * What installing `valid` changes in the project, read a page of installed resources at a
   * time; and whether it changes triggers.
   */
  async function planAgainstInstalled(projectId: string, valid: readonly ResourceSpec[]) {
    const planner = installationPlanner(valid);
    const triggers = new Set<string>();
    const yieldSometimes = timeSlicer();
    for (let after = ''; ; ) {
      const page = store.resources.installedPage(projectId, after, BATCH);
      planner.compare(page);
      for (const resource of page) if (resource.type === 'trigger') triggers.add(resource.id);
      if (page.length < BATCH) break;
      after = page[page.length - 1]?.id ?? after;
      await yieldSometimes();
    }
    const plan = planner.plan();
    const triggersChanged =
      plan.create.some((spec) => spec.type === 'trigger') ||
      plan.update.some(({ spec }) => spec.type === 'trigger') ||
      plan.delete.some((id) => triggers.has(id));
    return { plan, triggersChanged };
  }

  /** The changes of `plan`, deletions first; each creation gets its id as it is staged. */
  function* stagedChanges(plan: InstallationPlan<ResourceSpec>, now: Date): Generator<StagedChange> {
    for (const id of plan.delete) yield { change: 'delete', id };
    for (const { id, spec } of plan.update) yield { change: 'update', id, spec };
    for (const spec of plan.create) yield { change: 'create', id: newId(now), spec };
  }

  /** Stages the changes of `plan` a batch at a time, with turns of the event loop between. */
  async function stage(installation: string, plan: InstallationPlan<ResourceSpec>, now: Date) {
    const yieldSometimes = timeSlicer();
    let batch: StagedChange[] = [];
    for (const change of stagedChanges(plan, now)) {
      batch.push(change);
      if (batch.length < BATCH) continue;
      store.resources.stage(installation, batch);
      batch = [];
      await yieldSometimes();
    }
    store.resources.stage(installation, batch);
  }

  // Installations of a project run one at a time, each planned against what the previous one
  // left. This holds for one server per database, as today (scheduler/recovery.ts); several
  // servers on one database will need the lock in the database instead.
  const oneAtATime = oneAtATimePerKey();

  return {
    /**
     * Compiles the validators of resource specs now, rather than in the first install, which
     * would hold the server's thread as long. Called once the server listens.
     */
    prepare(): void {
      specValidator();
    },
    /**
     * Makes the resources of the project exactly `set`. The set is validated whole first; its
     * changes are planned and staged a slice of the event loop at a time, then applied in one
     * short transaction, so that readers see the whole set before or after, never a part. A
     * change to triggers then wakes the ticker, so that a new or changed schedule ticks on its
     * own time, not at the next pass.
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
      const triggersChanged = await oneAtATime(project.id, async () => {
        const { plan, triggersChanged } = await planAgainstInstalled(project.id, valid);
        const now = clock();
        const installation = newId(now);
        try {
          await stage(installation, plan, now);
          store.transaction(() => {
            // Looked up again: the project may have been deleted while the set was staged.
            projects.get(principal, projectId);
            store.resources.applyStaged(installation, project, formatTime(now));
          });
        } finally {
          store.resources.unstage(installation);
        }
        return triggersChanged;
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
