// The properties a client may send: those of every request body and of every resource spec,
// named `Schema.property` after the component schema that declares them (`PipelineData.retention`),
// or `Schema.property.member` for a member of an object declared inline (`TaskRuntime.parameters.image`).

type Json = Record<string, unknown>;

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'] as const;
/** Keywords whose subschemas describe the same value, or its items and members. */
const SUBSCHEMA_LISTS = ['oneOf', 'anyOf', 'allOf', 'prefixItems'] as const;
const SUBSCHEMAS = ['items', 'additionalProperties', 'not', 'if', 'then', 'else'] as const;
const SCHEMA_PREFIX = '#/components/schemas/';

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value an internal reference (`#/a/b`) designates in `document`. */
function dereference(document: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only internal references are followed: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((value, token) => {
      const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
      if (!isObject(value) || !(key in value)) throw new Error(`the spec has no ${ref}`);
      return value[key];
    }, document);
}

/** The schemas of every request body of `document`, whatever their media type. */
function requestBodySchemas(document: Json): unknown[] {
  const schemas: unknown[] = [];
  for (const item of Object.values((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation) || operation.requestBody === undefined) continue;
      let body: unknown = operation.requestBody;
      while (isObject(body) && typeof body.$ref === 'string') body = dereference(document, body.$ref);
      for (const media of Object.values(((body as Json).content ?? {}) as Record<string, Json>)) {
        schemas.push(media.schema);
      }
    }
  }
  return schemas;
}

/**
 * Every property reachable from the request bodies of `document` and from the named `roots`
 * (`#/components/schemas/ResourceSpec`), following `$ref`, `oneOf`/`anyOf`/`allOf`, `items`
 * and `additionalProperties`; sorted.
 */
export function documentedProperties(document: Json, roots: readonly string[] = []): string[] {
  const found = new Set<string>();
  const walked = new Set<string>();

  const visit = (schema: unknown, owner: string): void => {
    if (!isObject(schema)) return;
    if (typeof schema.$ref === 'string') {
      const ref = schema.$ref;
      if (!walked.has(ref)) {
        walked.add(ref);
        const name = ref.startsWith(SCHEMA_PREFIX) ? ref.slice(SCHEMA_PREFIX.length) : ref;
        visit(dereference(document, ref), name);
      }
    }
    for (const [property, subschema] of Object.entries((schema.properties ?? {}) as Json)) {
      found.add(`${owner}.${property}`);
      visit(subschema, `${owner}.${property}`);
    }
    for (const keyword of SUBSCHEMA_LISTS) {
      for (const subschema of (schema[keyword] ?? []) as unknown[]) visit(subschema, owner);
    }
    for (const keyword of SUBSCHEMAS) visit(schema[keyword], owner);
  };

  // A body declared inline has no component name: its properties go under `body`.
  for (const schema of requestBodySchemas(document)) visit(schema, 'body');
  for (const ref of roots) visit({ $ref: ref }, ref);
  return [...found].sort();
}
