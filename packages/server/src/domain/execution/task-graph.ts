// The dependency graph of a pipeline's entries, walked in time linear in its size: a pipeline
// of 10,000 entries in a chain costs what 10,000 independent ones cost.

/** An entry of a pipeline as its graph sees it. */
export interface GraphEntry {
  name: string;
  dependencies?: readonly string[] | undefined;
  nb_instances?: number | undefined;
}

/** What each task instance of an entry starts with: what holds it, and whom it holds. */
export interface EntryLinks {
  /** Instances of the entries it depends on: each must end before it can run. */
  blockers: number;
  /** Names of the entries that depend on it. */
  dependents: string[];
}

/** The links of every entry, by name (installs make names unique and dependencies known). */
export function entryLinks(entries: readonly GraphEntry[]): Map<string, EntryLinks> {
  const instances = new Map(entries.map((entry) => [entry.name, entry.nb_instances ?? 1]));
  const links = new Map<string, EntryLinks>(
    entries.map((entry) => [entry.name, { blockers: 0, dependents: [] }]),
  );
  for (const entry of entries) {
    const own = links.get(entry.name) as EntryLinks;
    for (const dependency of new Set(entry.dependencies ?? [])) {
      own.blockers += instances.get(dependency) ?? 0;
      links.get(dependency)?.dependents.push(entry.name);
    }
  }
  return links;
}

export interface TaskNode {
  id: string;
  name: string;
  status: string;
  dependencies: readonly string[];
}

/**
 * What restart_from_failure runs again: the failed and aborted tasks, and every task that
 * depends on one of them, directly or not (by pipeline entry name, all instances).
 */
export function tasksToRerun(tasks: readonly TaskNode[]): string[] {
  const dependents = new Map<string, string[]>();
  for (const task of tasks) {
    for (const dependency of task.dependencies) {
      const list = dependents.get(dependency) ?? [];
      list.push(task.name);
      dependents.set(dependency, list);
    }
  }
  const rerun = new Set<string>();
  const pending = tasks.filter((t) => t.status === 'failed' || t.status === 'aborted').map((t) => t.name);
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (rerun.has(name)) continue;
    rerun.add(name);
    for (const dependent of dependents.get(name) ?? []) pending.push(dependent);
  }
  return tasks.filter((t) => rerun.has(t.name)).map((t) => t.id);
}
