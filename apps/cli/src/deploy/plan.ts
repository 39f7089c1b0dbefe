/** A resource, by what identifies it in a project. */
export interface ResourceKey {
  type: string;
  name: string;
}

export interface Plan {
  create: ResourceKey[];
  update: ResourceKey[];
  delete: ResourceKey[];
  unchanged: ResourceKey[];
}

/** JSON with the members of every object sorted: equal for specs that differ only in order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const keyOf = (spec: { type?: unknown; name?: unknown }) => `${String(spec.type)}\u0000${String(spec.name)}`;
const byTypeAndName = (a: ResourceKey, b: ResourceKey) =>
  a.type === b.type ? (a.name < b.name ? -1 : 1) : a.type < b.type ? -1 : 1;

/**
 * What installing `wanted` does to a project holding `installed`, as the server decides it:
 * resources are matched by (type, name); a matched one is updated when its spec differs.
 */
export function planChanges(
  installed: { spec: { type: string; name: string } }[],
  wanted: { type?: unknown; name?: unknown }[],
): Plan {
  const current = new Map(installed.map((resource) => [keyOf(resource.spec), resource.spec]));
  const plan: Plan = { create: [], update: [], delete: [], unchanged: [] };
  const seen = new Set<string>();
  for (const spec of wanted) {
    const key = keyOf(spec);
    if (seen.has(key)) continue;
    seen.add(key);
    const resource = { type: String(spec.type), name: String(spec.name) };
    const before = current.get(key);
    if (!before) plan.create.push(resource);
    else if (canonicalJson(before) !== canonicalJson(spec)) plan.update.push(resource);
    else plan.unchanged.push(resource);
  }
  for (const [key, spec] of current) {
    if (!seen.has(key)) plan.delete.push({ type: spec.type, name: spec.name });
  }
  for (const list of Object.values(plan)) list.sort(byTypeAndName);
  return plan;
}
