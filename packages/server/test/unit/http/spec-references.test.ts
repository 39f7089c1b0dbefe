import { openapiDocument } from '@pipewright/types';
import { describe, expect, it } from 'vitest';

// The validator gets the spec dereferenced whole (http/validator.ts): a schema that refers to
// itself, directly or through others, would make a cyclic object that ajv cannot compile. A
// recursive schema needs the validator's `bundle` mode back.

/** The names of the component schemas that `node` refers to. */
function referencesOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) referencesOf(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.add(value.split('/').at(-1) ?? '');
      else referencesOf(value, found);
    }
  }
  return found;
}

describe('the references of the spec', () => {
  it('form no cycle, so that the validator can take the spec dereferenced', () => {
    const schemas = (openapiDocument as { components: { schemas: Record<string, unknown> } }).components
      .schemas;
    const graph = new Map(Object.entries(schemas).map(([name, schema]) => [name, referencesOf(schema)]));
    const cycles: string[] = [];
    const done = new Set<string>();
    const visit = (name: string, path: string[]) => {
      if (path.includes(name)) return void cycles.push([...path, name].join(' -> '));
      if (done.has(name)) return;
      for (const next of graph.get(name) ?? []) visit(next, [...path, name]);
      done.add(name);
    };
    for (const name of graph.keys()) visit(name, []);
    expect(graph.size).toBeGreaterThan(50);
    expect(cycles).toEqual([]);
  });
});
