import type { JsvError } from '../errors.js';
import { describeSchemaError, type SchemaError } from './schema-reasons.js';
import { quotedList } from './wording.js';

// A validator that meets a `oneOf` reports the failures of every branch: a number parameter
// with `values` also hears that its type should be "string" or "boolean". The spec uses two
// kinds of `oneOf`, and for both the branch the author meant can be told from the value:
//
// - tagged: each branch pins one property to a constant (`type: number`); the value's tag
//   selects the branch. A missing or unknown tag is reported by the enclosing schema, which
//   requires the property and lists its values (a unit test holds the spec to that).
// - exclusive: each branch requires its own property (`command` or `code`); exactly one of
//   them must be present.
//
// Only the errors of the meant branch are kept, said "when type is "number"". Any other
// kind of `oneOf` is left as the validator reported it.

type Shape =
  | { kind: 'tagged'; property: string; tags: unknown[] }
  | { kind: 'exclusive'; properties: string[] };

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function constantOf(schema: unknown): unknown {
  if (!isObject(schema)) return undefined;
  if ('const' in schema) return schema.const;
  return Array.isArray(schema.enum) && schema.enum.length === 1 ? schema.enum[0] : undefined;
}

function taggedShape(branches: Schema[]): Shape | undefined {
  const first = branches[0]?.properties;
  for (const property of Object.keys(isObject(first) ? first : {})) {
    const tags = branches.map((branch) => constantOf((branch.properties as Schema | undefined)?.[property]));
    if (tags.every((tag) => tag !== undefined) && new Set(tags).size === tags.length) {
      return { kind: 'tagged', property, tags };
    }
  }
  return undefined;
}

function exclusiveShape(branches: Schema[]): Shape | undefined {
  const required = branches.map((branch) =>
    Array.isArray(branch.required) ? (branch.required as string[]) : [],
  );
  const common = required.reduce((kept, names) => kept.filter((name) => names.includes(name)));
  const own = required.map((names) => names.filter((name) => !common.includes(name)));
  const properties = own.map((names) => names[0] as string);
  const distinct = new Set(properties).size === properties.length;
  return own.every((names) => names.length === 1) && distinct ? { kind: 'exclusive', properties } : undefined;
}

const shapes = new WeakMap<object, Shape | null>();

/** The kind of a `oneOf` given its branches, or undefined when it is neither kind. */
export function oneOfShape(branches: unknown): Shape | undefined {
  if (!Array.isArray(branches) || !branches.every(isObject)) return undefined;
  if (!shapes.has(branches)) shapes.set(branches, taggedShape(branches) ?? exclusiveShape(branches) ?? null);
  return shapes.get(branches) ?? undefined;
}

const within = (path: string, base: string) => path === base || path.startsWith(`${base}/`);

/** An error as the validator reports it in verbose mode: with the schema holding its keyword. */
type LocatedError = SchemaError & { parentSchema?: unknown };

/** The schema at these tokens of a schema path inside `schema`, through inline schemas only. */
function schemaAt(schema: unknown, tokens: string[]): unknown {
  return tokens.reduce<unknown>(
    (node, token) => (typeof node === 'object' && node !== null ? (node as Schema)[token] : undefined),
    schema,
  );
}

/**
 * The index of the branch of `oneOf` an error was found in, if any. Branches are inline
 * schemas (a unit test holds the spec to that), compiled with their `oneOf`, so the schema
 * path of their errors extends the one of the `oneOf`. Schema paths start again in each
 * referenced schema, so a path that looks like the `oneOf`'s may be another schema's own
 * (TimeSchedule's `#/oneOf/2/...` inside TriggerData's `#/oneOf`): it is the `oneOf`'s only
 * when it leads, through the branch, to the schema the error comes from.
 */
function branchOf(error: LocatedError, oneOf: SchemaError): number | undefined {
  const prefix = `${oneOf.schemaPath}/`;
  if (error === oneOf || !within(error.instancePath, oneOf.instancePath)) return undefined;
  if (!error.schemaPath.startsWith(prefix)) return undefined;
  const [index = '', ...rest] = error.schemaPath.slice(prefix.length).split('/');
  const branch = Number.parseInt(index, 10);
  const reached = schemaAt((oneOf.schema as unknown[] | undefined)?.[branch], rest.slice(0, -1));
  if (error.parentSchema !== undefined && reached !== undefined && reached !== error.parentSchema)
    return undefined;
  return branch;
}

/**
 * Whether an error that no branch's path leads to comes from a schema that a branch other than
 * `chosen` references for a member (TimeSchedule, the `parameters` of a time trigger, for the
 * `parameters` of a webhook trigger): such an error says what the value is not, for a branch
 * the author did not mean.
 */
function fromReferenceOfOtherBranch(error: LocatedError, oneOf: SchemaError, chosen: number): boolean {
  const branches = (oneOf.schema ?? []) as Schema[];
  const [member] = error.instancePath.slice(oneOf.instancePath.length + 1).split('/');
  if (!member || !within(error.instancePath, oneOf.instancePath)) return false;
  const referenceIn = (branch: Schema | undefined) =>
    (branch?.properties as Schema | undefined)?.[member] as { $ref?: unknown } | undefined;
  const own = referenceIn(branches[chosen])?.$ref;
  return branches.some((branch, index) => {
    const reference = referenceIn(branch)?.$ref;
    return index !== chosen && typeof reference === 'string' && reference !== own;
  });
}

type Verdict =
  | { branch: number; context: string }
  | { problem: string }
  /** The enclosing schema reports what is wrong. */
  | { silent: true };

function judge(shape: Shape, data: unknown): Verdict {
  const value = isObject(data) ? data : {};
  if (shape.kind === 'tagged') {
    const tag = value[shape.property];
    const branch = shape.tags.indexOf(tag);
    return branch < 0
      ? { silent: true }
      : { branch, context: `when ${shape.property} is ${JSON.stringify(tag)}` };
  }
  const present = shape.properties.filter((property) => Object.hasOwn(value, property));
  if (present.length === 0) return { problem: `must have one of ${quotedList(shape.properties)}` };
  if (present.length > 1) return { problem: `must have only one of ${quotedList(present, 'and')}` };
  const branch = shape.properties.indexOf(present[0] as string);
  return { branch, context: `when ${JSON.stringify(present[0])} is present` };
}

/**
 * Turns the errors of one validation into what a person reads: one JsvError per problem,
 * pointing at the member at fault, with pointers relative to the validated value.
 */
export function explainSchemaErrors(errors: LocatedError[]): JsvError[] {
  const dropped = new Set<SchemaError>();
  const contexts = new Map<SchemaError, string>();
  const replaced = new Map<SchemaError, JsvError>();

  // Outer `oneOf`s first (shorter paths): dropping a branch drops the `oneOf`s inside it.
  const oneOfs = errors
    .filter((error) => error.keyword === 'oneOf')
    .sort((a, b) => a.instancePath.length - b.instancePath.length);
  for (const oneOf of oneOfs) {
    const shape = oneOfShape(oneOf.schema);
    if (dropped.has(oneOf) || !shape) continue;
    const verdict = judge(shape, oneOf.data);
    if ('problem' in verdict) replaced.set(oneOf, { pointer: oneOf.instancePath, reason: verdict.problem });
    else dropped.add(oneOf);
    for (const error of errors) {
      const branch = branchOf(error, oneOf);
      if (branch === undefined) {
        if (
          'branch' in verdict &&
          error !== oneOf &&
          fromReferenceOfOtherBranch(error, oneOf, verdict.branch)
        ) {
          dropped.add(error);
        }
        continue;
      }
      if ('branch' in verdict && branch === verdict.branch) {
        contexts.set(error, verdict.context); // an inner oneOf, judged later, says it more precisely
      } else {
        dropped.add(error);
      }
    }
  }
  return errors
    .filter((error) => !dropped.has(error))
    .filter((error) => error.keyword !== 'propertyNames') // its inner errors name the member
    .map((error) => replaced.get(error) ?? describeSchemaError(error, contexts.get(error)));
}
