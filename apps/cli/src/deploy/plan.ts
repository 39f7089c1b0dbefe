/** A resource, by what identifies it in a project. */
export interface ResourceKey {
  type: string;
  name: string;
}

/** One difference between two specs: a field's value before and after (undefined: absent). */
export interface FieldChange {
  /** As a reader writes it: `data.steps[0].command`, `data.environment["MY-VAR"]`. */
  path: string;
  before?: unknown;
  after?: unknown;
}

export interface UpdatedResource extends ResourceKey {
  changes: FieldChange[];
}

export interface Plan {
  create: ResourceKey[];
  update: UpdatedResource[];
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

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function memberPath(path: string, key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

/**
 * The fields that differ between two JSON values, deepest first reached: objects are compared
 * member by member (whatever their order), arrays item by item; anything else as a whole.
 */
export function fieldChanges(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => fieldChanges(before[key], after[key], memberPath(path, key)));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, index) =>
      fieldChanges(before[index], after[index], `${path}[${index}]`),
    ).flat();
  }
  if (canonicalJson(before) === canonicalJson(after)) return [];
  return [{ path: path || '(the whole spec)', before, after }];
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
    else if (canonicalJson(before) !== canonicalJson(spec))
      plan.update.push({ ...resource, changes: fieldChanges(before, spec) });
    else plan.unchanged.push(resource);
  }
  for (const [key, spec] of current) {
    if (!seen.has(key)) plan.delete.push({ type: spec.type, name: spec.name });
  }
  for (const list of Object.values(plan)) list.sort(byTypeAndName);
  return plan;
}
