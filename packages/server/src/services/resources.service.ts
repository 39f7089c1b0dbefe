import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError, invalidRequestBody, type JsvError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { pointer } from '../domain/json-pointer.js';
import type { Principal } from '../domain/principal.js';
import { type InstallationPlan, installationPlanner } from '../domain/resources/diff.js';
import { checkResourceSet, type SetEntry } from '../domain/resources/set.js';
import { formatTime } from '../domain/time.js';
import type { InstallationTarget, StagedChange, Store } from '../store/index.js';
import { oneAtATimePerKey } from './concurrency/one-at-a-time.js';
import { nextTurn, timeSlicer } from './concurrency/time-slices.js';
import type { createProjectService } from './projects.service.js';
import { createSpecValidator } from './resources/spec-schemas.js';
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

/** How many installed resources are compared in one slice. */
const BATCH = 500;

/** How many marks one transaction folds into their rows: each rewrites its row (about 5 ms for 100 here). */
const FOLD_BATCH = 100;

/**
 * How many changes one transaction writes hidden: a resource written from JavaScript costs a
 * few times one folded in SQL, and every transaction holds the server's one thread (200 take
 * 10-15 ms here; slices of 50 made an install of 10,000 specs a third slower, for no shorter
 * waits of other requests: bench/README.md, stall).
 */
const HIDDEN_BATCH = 200;

/** The spec index of a pointer into the request body (`/specs/7/...` is 7). */
const specIndexOf = (jsvError: JsvError) => Number(jsvError.pointer.split('/')[2]);

/**
 * `unsynced` is a connection of the same database that does not sync its commits to disk.
 * Everything an installation writes before the commit that applies it goes through it: a crash
 * may lose it, but then the installation was not acknowledged either, and its leftovers are
 * undone by the project's next one. The applying commit, through `store`, syncs the log, and
 * with it every commit before it, since a database's log is one file (SQLite's WAL, PostgreSQL's
 * WAL flushed up to that commit). An installation of 10,000 specs makes 70 such commits; on
 * SQLite each sync would hold the server's thread 10-20 ms, and the applying commit's sync of
 * them all 40-50 ms, which is why the log is synced in the thread pool before it
 * (bench/README.md, stall).
 */
export function createResourceService(
  store: Store,
  unsynced: Store,
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
    // A slice of its own from the first: the request's body was just parsed and checked.
    await nextTurn();
    for (const [index, spec] of set.entries()) {
      await yieldSometimes();
      const own = specs.validate(spec);
      for (const problem of own) {
        ownProblems.push({ ...problem, pointer: `${pointer('', 'specs', index)}${problem.pointer}` });
      }
      const { type, name } = (spec ?? {}) as { type?: unknown; name?: unknown };
      if (specs.types.has(type as string) && typeof name === 'string') {
        const valid = own.length === 0 ? (spec as ResourceSpec) : undefined;
        entries.push({ index, type: type as ResourceType, name, spec: valid });
      }
    }
    // The checks of the whole set take a slice of their own.
    await nextTurn();
    // Spread into an array, not into push(): a broken set of 10,000 specs has many problems.
    const problems = [...ownProblems, ...checkResourceSet(entries)];
    if (problems.length > 0) {
      throw invalidRequestBody(problems.sort((a, b) => specIndexOf(a) - specIndexOf(b)));
    }
    return set as ResourceSpec[];
  }

  /**
   * What installing `valid` changes in the project, read a page of installed resources at a
   * time; the ids of its triggers; and whether it changes triggers.
   */
  async function planAgainstInstalled(projectId: string, valid: readonly ResourceSpec[]) {
    const planner = installationPlanner(valid);
    const triggerIds = new Set<string>();
    const yieldSometimes = timeSlicer();
    for (let after = ''; ; ) {
      const page = await store.resources.installedPage(projectId, after, BATCH);
      planner.compare(page);
      for (const resource of page) if (resource.type === 'trigger') triggerIds.add(resource.id);
      if (page.length < BATCH) break;
      after = page[page.length - 1]?.id ?? after;
      await yieldSometimes();
    }
    const plan = planner.plan();
    const triggersChanged =
      plan.create.some((spec) => spec.type === 'trigger') ||
      plan.update.some(({ spec }) => spec.type === 'trigger') ||
      plan.delete.some((id) => triggerIds.has(id));
    return { plan, triggerIds, triggersChanged };
  }

  /** The changes of `plan`, deletions first; each creation gets its id as it is reached. */
  function* changesOf(plan: InstallationPlan<ResourceSpec>, now: Date): Generator<StagedChange> {
    for (const id of plan.delete) yield { change: 'delete', id };
    for (const { id, spec } of plan.update) yield { change: 'update', id, spec };
    for (const spec of plan.create) yield { change: 'create', id: newId(now), spec };
  }

  /**
   * Writes the changes of `plan` hidden from readers, a slice per transaction with turns of
   * the event loop between, each slice checking first that the project is still there; returns
   * those of triggers, which are written when the installation is applied (see
   * store/resources.store.ts).
   */
  async function writeHidden(
    principal: Principal,
    target: InstallationTarget,
    { plan, triggerIds }: { plan: InstallationPlan<ResourceSpec>; triggerIds: ReadonlySet<string> },
    now: Date,
  ): Promise<StagedChange[]> {
    const triggers: StagedChange[] = [];
    let slice: StagedChange[] = [];
    const write = async () => {
      await nextTurn();
      await unsynced.transaction(async (tx) => {
        await projects.get(principal, target.project_id, tx);
        await tx.resources.writeHidden(target, slice);
      });
      slice = [];
    };
    for (const change of changesOf(plan, now)) {
      const ofTrigger =
        change.change === 'delete' ? triggerIds.has(change.id) : change.spec.type === 'trigger';
      if (ofTrigger) triggers.push(change);
      else slice.push(change);
      if (slice.length === HIDDEN_BATCH) await write();
    }
    if (slice.length > 0) await write();
    return triggers;
  }

  /** Folds what an installation wrote hidden into the rows, or undoes it if it was not applied, a slice at a time. */
  async function finish(installation: string) {
    while (!(await unsynced.transaction((tx) => tx.resources.finishInstallation(installation, FOLD_BATCH))))
      await nextTurn();
  }

  // Installations of a project run one at a time, each planned against what the previous one
  // left. This holds for one server per database, as today (scheduler/recovery.ts); several
  // servers on one database will need the lock in the database instead.
  const oneAtATime = oneAtATimePerKey();

  return {
    /**
     * Compiles the validators of resource specs now, a piece a turn of the event loop, rather
     * than in the first install, which would hold the server's thread as long. Called once the
     * server listens.
     */
    async prepare(): Promise<void> {
      await nextTurn();
      await specValidator().compile();
    },
    /**
     * Makes the resources of the project exactly `set`. The set is validated whole first; its
     * changes are planned, then written hidden from readers a slice of the event loop at a
     * time, and made visible by one small transaction, so that readers see the whole set
     * before or after, never a part. A change to triggers then wakes the ticker, so that a new
     * or changed schedule ticks on its own time, not at the next pass.
     */
    async install(
      principal: Principal,
      projectId: string,
      set: readonly unknown[],
      options: InstallOptions,
    ): Promise<void> {
      const project = await projects.get(principal, projectId);
      const valid = await validateSet(set);
      if (options.dryRun) return;
      const triggersChanged = await oneAtATime(project.id, async () => {
        // What a crash or a failure left of earlier installations of the project.
        const unfinished = await store.resources.unfinishedInstallations(project.id);
        for (const earlier of unfinished) await finish(earlier);
        const planned = await planAgainstInstalled(project.id, valid);
        const { plan } = planned;
        if (plan.create.length + plan.update.length + plan.delete.length === 0) return false;
        const now = clock();
        const target = {
          installation: newId(now),
          project_id: project.id,
          org_id: project.org_id,
          time: formatTime(now),
        };
        await unsynced.transaction(async (tx) => {
          await projects.get(principal, projectId, tx);
          await tx.resources.beginInstallation(target);
        });
        try {
          const triggers = await writeHidden(principal, target, planned, now);
          // The hidden rows synced off the thread: the commit below then syncs only its own.
          await store.syncLog();
          await store.transaction(async (tx) => {
            // Looked up again: the project may have been deleted while the set was written.
            await projects.get(principal, projectId, tx);
            await tx.resources.writeVisible(target, triggers);
            await tx.resources.applyInstallation(target.installation);
          });
        } finally {
          // Readers see the right set already, applied or not: what is left of a failure here
          // is finished by the project's next installation.
          await finish(target.installation).catch(() => undefined);
        }
        return planned.triggersChanged;
      });
      if (triggersChanged) schedules.schedulesChanged();
    },
    list(project: Project, type: ResourceType | undefined, request: PageRequest): Promise<Page<Resource>> {
      return store.resources.list(project.id, type, request);
    },
    async get(project: Project, id: string): Promise<Resource> {
      const resource = await store.resources.get(project.id, id);
      if (!resource) throw unknownResource(`id ${id}`, { id });
      return resource;
    },
    async getByTypeAndName(project: Project, type: ResourceType, name: string): Promise<Resource> {
      const resource = await store.resources.getByTypeAndName(project.id, type, name);
      if (!resource) throw unknownResource(`type ${type} and name ${name}`, { type, name });
      return resource;
    },
  };
}
