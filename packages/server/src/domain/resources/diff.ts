/** A resource of the project as an installation compares it: its key and its spec's text. */
export interface InstalledResource {
  id: string;
  type: string;
  name: string;
  spec: string;
}

export interface DesiredSpec {
  type: string;
  name: string;
}

/** What installing a set changes, matching resources by (type, name). */
export interface InstallationPlan<Spec extends DesiredSpec> {
  create: Spec[];
  /** Installed resources whose spec changed, with their new spec. */
  update: { id: string; spec: Spec }[];
  /** Ids of installed resources whose spec is the same: nothing of them changes. */
  unchanged: string[];
  /** Ids of installed resources absent from the set. */
  delete: string[];
}

/**
 * JSON with object members sorted by name: two specs that differ only in the order of their
 * members are the same spec. Arrays keep their order, which means something (steps, tasks).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

const keyOf = (resource: { type: string; name: string }) => `${resource.type}/${resource.name}`;

/**
 * Compares a valid set (unique type and name) with what the project has, fed a page of
 * installed resources at a time, so that a large project is compared in slices. A rename is a
 * delete and a create; creations keep the order of the set.
 */
export function installationPlanner<Spec extends DesiredSpec>(desired: readonly Spec[]) {
  const wanted = new Map(desired.map((spec) => [keyOf(spec), spec]));
  const found = new Set<Spec>();
  const plan: InstallationPlan<Spec> = { create: [], update: [], unchanged: [], delete: [] };
  return {
    compare(installed: readonly InstalledResource[]): void {
      for (const resource of installed) {
        const spec = wanted.get(keyOf(resource));
        if (!spec) plan.delete.push(resource.id);
        else {
          found.add(spec);
          if (canonicalJson(JSON.parse(resource.spec)) === canonicalJson(spec))
            plan.unchanged.push(resource.id);
          else plan.update.push({ id: resource.id, spec });
        }
      }
    },
    plan(): InstallationPlan<Spec> {
      return { ...plan, create: desired.filter((spec) => !found.has(spec)) };
    },
  };
}
