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

/** Compares a valid set (unique type and name) with what the project has. A rename is a delete and a create. */
export function planInstallation<Spec extends DesiredSpec>(
  installed: readonly InstalledResource[],
  desired: readonly Spec[],
): InstallationPlan<Spec> {
  const current = new Map(installed.map((resource) => [keyOf(resource), resource]));
  const plan: InstallationPlan<Spec> = { create: [], update: [], unchanged: [], delete: [] };
  for (const spec of desired) {
    const resource = current.get(keyOf(spec));
    current.delete(keyOf(spec));
    if (!resource) plan.create.push(spec);
    else if (canonicalJson(JSON.parse(resource.spec)) === canonicalJson(spec))
      plan.unchanged.push(resource.id);
    else plan.update.push({ id: resource.id, spec });
  }
  plan.delete = [...current.values()].map((resource) => resource.id);
  return plan;
}
