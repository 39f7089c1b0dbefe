import type { Schemas } from '@pipewright/client';

type Resource = Schemas['Resource'];
export type ResourceType = Schemas['ResourceSpec']['type'];

/** Resources of one type that a resource names, or that name it, under a heading. */
export interface ReferenceGroup {
  heading: string;
  type: ResourceType;
  names: string[];
}

/** What a spec names: the pipelines a trigger or command starts, the tasks a pipeline uses. */
function named(resource: Resource): { type: ResourceType; names: string[] } | undefined {
  const { spec } = resource;
  if (spec.type === 'trigger' || spec.type === 'command')
    return { type: 'pipeline', names: spec.data.pipelines };
  if (spec.type === 'pipeline')
    return { type: 'task', names: [...new Set(spec.data.tasks.map((entry) => entry.task))] };
  return undefined;
}

const key = (type: ResourceType, name: string) => `${type}/${name}`;
const sorted = (names: string[]) => [...names].sort((a, b) => a.localeCompare(b));

/** Who names a resource, by its type, in the order asked for. */
const NAMED_BY: [ResourceType, string][] = [
  ['pipeline', 'Used by the pipelines'],
  ['trigger', 'Started by the triggers'],
  ['command', 'Started by the commands'],
];

/**
 * The cross-references of a project's resources, both ways: the tasks a pipeline uses and the
 * triggers and commands that start it, the pipelines that use a task, the pipelines a trigger or
 * command starts. Names come sorted.
 */
export function resourceReferences(resources: Resource[]): (resource: Resource) => ReferenceGroup[] {
  // By the type and name of a named resource: the names of those naming it, by their type.
  const namedBy = new Map<string, Map<ResourceType, string[]>>();
  for (const resource of resources) {
    const target = named(resource);
    if (!target) continue;
    for (const name of target.names) {
      const byType = namedBy.get(key(target.type, name)) ?? new Map<ResourceType, string[]>();
      namedBy.set(key(target.type, name), byType);
      byType.set(resource.spec.type, [...(byType.get(resource.spec.type) ?? []), resource.spec.name]);
    }
  }
  return (resource) => {
    const groups: ReferenceGroup[] = [];
    const target = named(resource);
    if (target) {
      const heading = target.type === 'task' ? 'Uses the tasks' : 'Starts the pipelines';
      groups.push({ heading, type: target.type, names: sorted(target.names) });
    }
    const users = namedBy.get(key(resource.spec.type, resource.spec.name));
    for (const [type, heading] of NAMED_BY) {
      const names = users?.get(type);
      if (names) groups.push({ heading, type, names: sorted(names) });
    }
    return groups;
  };
}
