import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { RawRequest } from './http.js';
import { type Json, type Operation, type Parameter, pathOf, resolve } from './spec.js';
import { pathValuesOf, type World } from './world.js';

// Requests the spec refuses, derived from a valid request of each operation by breaking one
// thing in it: a value of the body against its schema, a path or query parameter, the
// project header, the encoding, the size, the shape of the JSON itself. Each comes with the
// error codes it may be answered with.

export interface BadRequest {
  /** What was broken, for the report of a failure: `body:value /specs/2/name`. */
  what: string;
  request: RawRequest;
  /** The codes the answer may carry; the status must be listed by the operation. */
  codes: readonly string[];
}

const BODY_CODES = ['invalid_request_body', 'invalid_json'] as const;
const PROJECT_HEADER = 'x-service-project-id';
/** Levels of nesting sent where the spec accepts any JSON: far beyond the 100 allowed. */
const DEEP_LEVELS = [101, 1_000, 10_000, 100_000] as const;

// ---- values a schema refuses

const OTHER_TYPES: Record<string, unknown[]> = {
  string: [0, true, null, [], {}],
  integer: ['1', 1.5, true, null],
  number: ['1', true, null],
  boolean: ['true', 1, null],
  array: [{}, 'x', 1, null],
  object: [[], 'x', 1, null],
};

/** Empty, or dots only. */
const DOTS = /^\.*$/;

const FORMAT_VIOLATIONS: Record<string, string[]> = {
  'date-time': ['yesterday', '2026-13-45T25:61:00Z', '2026-11-22'],
  'json-pointer': ['branch', '~'],
  regex: ['(', '[a-', '\\'],
};

/**
 * Strings that break `schema`'s string constraints (pattern, lengths, enum, const, format),
 * none of them empty or dots only: in a path, those would make another path.
 */
function badStrings(schema: Json): fc.Arbitrary<string>[] {
  const found: fc.Arbitrary<string>[] = [];
  const enumerated = (schema.enum ?? (typeof schema.const === 'string' ? [schema.const] : undefined)) as
    | unknown[]
    | undefined;
  if (enumerated) {
    found.push(
      fc
        .oneof(fc.string({ minLength: 1 }), fc.constantFrom('TASK', 'deleted', 'x'.repeat(10_000)))
        .filter((value) => !enumerated.includes(value) && !DOTS.test(value)),
    );
  }
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern, 'u');
    const candidates = fc.oneof(
      fc.string({ minLength: 1, maxLength: 120, unit: 'grapheme' }),
      // NUL for the patterns that refuse only it (a scratchpad key): the strings above hardly ever
      // hold it, and the filter below would draw them without end.
      fc.constantFrom(
        'UPPER',
        'with space',
        'a/b',
        '-leading',
        'é',
        'a\u0000b',
        'a'.repeat(101),
        'a'.repeat(10_000),
      ),
    );
    found.push(candidates.filter((value) => !pattern.test(value) && !DOTS.test(value)));
  }
  if (typeof schema.maxLength === 'number') {
    const max = schema.maxLength;
    found.push(fc.integer({ min: 1, max: 64 }).map((extra) => 'a'.repeat(max + extra)));
  }
  const format = FORMAT_VIOLATIONS[String(schema.format)];
  if (format) found.push(fc.constantFrom(...format));
  return found;
}

/** The JSON types a schema declares (`type` may be one name or a list). */
function typesOf(schema: Json): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  return typeof schema.type === 'string' ? [schema.type] : [];
}

/** JSON values `schema` refuses on their own (whatever surrounds them), if it constrains any. */
function badValues(schema: Json): fc.Arbitrary<unknown>[] {
  const types = typesOf(schema);
  const found: fc.Arbitrary<unknown>[] = [];
  if (types.length > 0) {
    const others = Object.values(OTHER_TYPES)
      .flat()
      .filter((value) => !types.some((type) => matchesType(type, value)));
    if (others.length > 0) found.push(fc.constantFrom(...others));
  }
  if (typeof schema.const === 'number') found.push(fc.constant(schema.const + 1));
  if (types.length === 0 || (types.length === 1 && types[0] === 'string')) {
    found.push(...badStrings(schema));
    if (typeof schema.minLength === 'number' && schema.minLength > 0) found.push(fc.constant(''));
  }
  if (types.includes('integer') || types.includes('number')) {
    const bounds: number[] = [];
    if (typeof schema.minimum === 'number') bounds.push(schema.minimum - 1);
    if (typeof schema.maximum === 'number') bounds.push(schema.maximum + 1);
    if (types.includes('integer') && !types.includes('number')) bounds.push(1.5);
    if (bounds.length > 0) found.push(fc.constantFrom(...bounds));
  }
  if (types.includes('array') && typeof schema.minItems === 'number' && schema.minItems > 0) {
    found.push(fc.constant([]));
  }
  return found;
}

function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return false;
  }
}

// ---- where a body can be broken

interface Location {
  /** Path of tokens from the body's root. */
  at: (string | number)[];
  value: unknown;
  schema: Json;
}

/** The schema with its allOf members and discriminated oneOf branch (chosen by `value`) merged in. */
function effective(schema: Json, value: unknown): Json {
  const resolved = resolve(schema);
  const parts = [resolved, ...((resolved.allOf as unknown[]) ?? []).map(resolve)];
  const discriminator = resolved.discriminator as
    | { propertyName: string; mapping: Record<string, string> }
    | undefined;
  if (discriminator && typeof value === 'object' && value !== null) {
    const branch = discriminator.mapping[String((value as Json)[discriminator.propertyName])];
    if (branch) parts.push(resolve({ $ref: branch }));
  }
  const merged: Json = { ...resolved };
  merged.properties = Object.assign({}, ...parts.map((p) => p.properties ?? {}));
  merged.required = parts.flatMap((p) => (p.required as string[]) ?? []);
  if (parts.some((p) => p.additionalProperties === false)) merged.additionalProperties = false;
  const typed = parts.find((p) => p.type !== undefined);
  if (typed) merged.type = typed.type;
  return merged;
}

/** Every value of `value` (the body's valid example) with the schema that governs it. */
function locations(value: unknown, schema: Json, at: (string | number)[] = []): Location[] {
  const merged = effective(schema, value);
  const found: Location[] = [{ at, value, schema: merged }];
  if (Array.isArray(value) && merged.items) {
    value.forEach((item, index) => {
      found.push(...locations(item, merged.items as Json, [...at, index]));
    });
  } else if (typeof value === 'object' && value !== null) {
    const properties = merged.properties as Record<string, Json>;
    for (const [key, child] of Object.entries(value)) {
      const childSchema =
        properties[key] ??
        (typeof merged.additionalProperties === 'object' ? (merged.additionalProperties as Json) : undefined);
      if (childSchema) found.push(...locations(child, childSchema, [...at, key]));
    }
  }
  return found;
}

function setAt(root: unknown, at: (string | number)[], change: (parent: Json, key: string | number) => void) {
  const copy = structuredClone(root);
  if (at.length === 0) return copy;
  const parent = at.slice(0, -1).reduce<Json>((node, token) => node[token] as Json, copy as Json);
  change(parent, at.at(-1) as string | number);
  return copy;
}

const describeAt = (at: (string | number)[]) => `/${at.join('/')}`;

/** Bodies the schema refuses, from a valid example, as JSON text. */
function badJsonBodies(example: unknown, schema: Json): fc.Arbitrary<{ what: string; text: string }> {
  const all = locations(example, schema);
  const choices: fc.Arbitrary<{ what: string; text: string }>[] = [];
  const valued = all.flatMap((location) =>
    badValues(location.schema).map((values) => ({ location, values })),
  );
  if (valued.length > 0) {
    choices.push(
      fc.constantFrom(...valued).chain(({ location, values }) =>
        values.map((bad) => ({
          what: `body:value ${describeAt(location.at)}`,
          text:
            location.at.length === 0
              ? JSON.stringify(bad)
              : JSON.stringify(
                  setAt(example, location.at, (parent, key) => {
                    parent[key] = bad;
                  }),
                ),
        })),
      ),
    );
  }
  const withRequired = all.flatMap((location) =>
    (location.schema.required as string[])
      .filter((key) => typeof location.value === 'object' && location.value !== null && key in location.value)
      .map((key) => ({ location, key })),
  );
  if (withRequired.length > 0) {
    choices.push(
      fc.constantFrom(...withRequired).map(({ location, key }) => ({
        what: `body:missing ${describeAt([...location.at, key])}`,
        text: JSON.stringify(
          setAt(example, [...location.at, key], (parent, k) => {
            delete parent[k];
          }),
        ),
      })),
    );
  }
  const closed = all.filter(
    (location) => location.schema.additionalProperties === false && matchesType('object', location.value),
  );
  if (closed.length > 0) {
    choices.push(
      fc
        .tuple(fc.constantFrom(...closed), fc.stringMatching(/^[a-z_]{1,20}$/), fc.jsonValue())
        .map(([location, key, extra]) => ({
          what: `body:extra ${describeAt([...location.at, `unexpected_${key}`])}`,
          text: JSON.stringify(
            setAt(example, [...location.at, `unexpected_${key}`], (parent, k) => {
              parent[k] = extra;
            }),
          ),
        })),
    );
  }
  const unique = all.filter(
    (location) =>
      location.schema.uniqueItems === true && Array.isArray(location.value) && location.value.length > 0,
  );
  if (unique.length > 0) {
    choices.push(
      fc.constantFrom(...unique).map((location) => ({
        what: `body:duplicate ${describeAt(location.at)}`,
        text: JSON.stringify(
          setAt(example, location.at, (parent, key) => {
            const items = parent[key] as unknown[];
            parent[key] = [...items, items[0]];
          }),
        ),
      })),
    );
  }
  // Values nested deeper than allowed, where the schema takes any JSON (event data) or at
  // the root: the text is written by hand, JSON.stringify could not write it.
  const open = all.filter(
    (location) => matchesType('object', location.value) && location.schema.additionalProperties !== false,
  );
  const deepSpots = [...open.map((location) => location.at), undefined];
  choices.push(
    fc.tuple(fc.constantFrom(...deepSpots), fc.constantFrom(...DEEP_LEVELS)).map(([at, levels]) => {
      const deep = `${'['.repeat(levels)}${']'.repeat(levels)}`;
      if (!at) return { what: `body:deep / ${levels}`, text: deep };
      const marker = '"__deep__"';
      const text = JSON.stringify(
        setAt(example, [...at, 'nested'], (parent, key) => {
          parent[key] = '__deep__';
        }),
      ).replace(marker, deep);
      return { what: `body:deep ${describeAt([...at, 'nested'])} ${levels}`, text };
    }),
  );
  return fc.oneof(...choices);
}

// ---- whole requests

const BAD_BYTES = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe0, 0xa4], [0x80]].map((bytes) =>
  Buffer.from(bytes),
);

const UNDECODABLE = ['%', '%G1', '%FF', '%C0%80', '%ED%A0%80', '%E0%A4'];

const WRONG_JSON_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
];

function withBody(
  request: RawRequest,
  body: string | Buffer,
  headers: Record<string, string> = {},
): RawRequest {
  return { ...request, body, headers: { ...request.headers, ...headers } };
}

function bodyRequests(
  operation: Operation,
  valid: RawRequest,
  limitBytes: number,
): fc.Arbitrary<BadRequest>[] {
  const body = operation.body;
  if (!body) return [];
  const text = String(valid.body);
  const limit = body.mediaType === 'application/json' ? limitBytes : Number(body.schema.maxLength);
  const choices: fc.Arbitrary<BadRequest>[] = [
    fc.integer({ min: 1, max: 4096 }).map((extra) => ({
      what: `body:huge +${extra}`,
      // Trailing spaces keep it valid JSON: only its size is wrong.
      request: withBody(valid, text + ' '.repeat(limit + extra - Buffer.byteLength(text))),
      codes: ['request_body_too_large'],
    })),
    fc.constant({
      what: 'body:gzip-bomb',
      request: withBody(valid, gzipSync(text + ' '.repeat(limit * 4)), { 'content-encoding': 'gzip' }),
      codes: ['request_body_too_large'],
    }),
    fc.constant({
      what: 'body:gzip-corrupt',
      request: withBody(valid, text, { 'content-encoding': 'gzip' }),
      codes: ['invalid_request_body'],
    }),
    fc.tuple(fc.nat(text.length), fc.constantFrom(...BAD_BYTES)).map(([at, bytes]) => ({
      what: `body:utf8 @${at} ${bytes.toString('hex')}`,
      request: withBody(
        valid,
        Buffer.concat([Buffer.from(text.slice(0, at)), bytes, Buffer.from(text.slice(at))]),
      ),
      codes: [...BODY_CODES],
    })),
  ];
  if (body.mediaType !== 'application/json') return choices;
  choices.push(
    badJsonBodies(body.example, body.schema).map(({ what, text: bad }) => ({
      what,
      request: withBody(valid, bad),
      codes: [...BODY_CODES],
    })),
    fc.integer({ min: 1, max: Math.max(1, text.length - 1) }).map((length) => ({
      what: `body:truncated ${length}`,
      request: withBody(valid, text.slice(0, length)),
      codes: ['invalid_json'],
    })),
    fc.constantFrom(...WRONG_JSON_TYPES, '').map((type) => {
      const headers = { ...valid.headers };
      delete headers['content-type'];
      return {
        what: `body:content-type ${type || '(none)'}`,
        request: { ...valid, headers: type ? { ...headers, 'content-type': type } : headers },
        codes: ['unsupported_media_type', ...BODY_CODES],
      };
    }),
  );
  return choices;
}

function pathRequests(operation: Operation, world: World, valid: RawRequest): fc.Arbitrary<BadRequest>[] {
  const values = pathValuesOf(operation, world);
  return operation.parameters
    .filter((p) => p.in === 'path')
    .map((parameter) => {
      const bad = fc.oneof(
        ...badStrings(parameter.schema).map((strings) => strings.map((s) => encodeURIComponent(s))),
        fc.constantFrom(...UNDECODABLE),
      );
      const unknown =
        parameter.name === 'id' || parameter.name === 'name'
          ? [fc.stringMatching(parameter.name === 'id' ? /^[0-9A-Za-z]{27}$/ : /^nothing[a-z0-9]{1,20}$/)]
          : [];
      return fc.oneof(bad, ...unknown).map((value) => ({
        what: `path:${parameter.name} ${value.slice(0, 40)}${value.length > 40 ? `... (${value.length})` : ''}`,
        request: { ...valid, path: pathOf(operation, { ...values, [parameter.name]: value }) },
        codes: [
          'invalid_route_variable',
          'unknown_project',
          'unknown_account',
          'unknown_resource',
          'unknown_command',
          'unknown_command_execution',
          'unknown_pipeline',
          'unknown_task',
          'unknown_event',
          'unknown_scratchpad_entry',
          'unknown_webhook',
          'unknown_identity',
          'unknown_api_key',
        ],
      }));
    });
}

/** Whether a query value decoded from broken percent-encoding (U+FFFD) is refused too. */
const refusesReplacement = (schema: Json) =>
  schema.pattern !== undefined || schema.enum !== undefined || typesOf(schema).includes('integer');

/** Whether `payload` is what a key of the default sort holds: `[sort, value, id, inclusive]`. */
function isKeyOfIdSort(payload: unknown): boolean {
  if (!Array.isArray(payload) || payload.length !== 4) return false;
  const [sort, value, id, inclusive] = payload as unknown[];
  return (
    sort === 'id' &&
    (typeof value === 'string' || typeof value === 'number') &&
    typeof id === 'string' &&
    (inclusive === 0 || inclusive === 1)
  );
}

function queryValues(parameter: Parameter): fc.Arbitrary<string> {
  const { schema } = parameter;
  const strings = badStrings(schema).map((s) => s.map(encodeURIComponent));
  const choices: fc.Arbitrary<string>[] = [...strings];
  if (typesOf(schema).includes('integer')) {
    const { minimum = 0, maximum } = schema as { minimum?: number; maximum?: number };
    // Above the maximum only where there is one: a run number has none (a run the task has not
    // had yet is an empty list, not an error).
    const above = maximum === undefined ? [] : [String(maximum + 1)];
    choices.push(fc.constantFrom(String(minimum - 1), ...above, '1.5', 'ten', 'true', '1,2'));
  }
  if (parameter.name === 'after' || parameter.name === 'before') {
    // Keys of the right alphabet that the server never made: other JSON, other sorts.
    const notAKey = fc
      .oneof(
        fc.jsonValue(),
        fc.tuple(fc.constantFrom('name', 'event_time', 'x'), fc.string(), fc.string(), fc.constantFrom(0, 1)),
        fc.tuple(fc.constant('id'), fc.jsonValue(), fc.jsonValue(), fc.jsonValue()),
      )
      .filter((payload) => !isKeyOfIdSort(payload))
      .map((payload) => Buffer.from(JSON.stringify(payload)).toString('base64url'))
      .filter((key) => key.length <= 512);
    choices.push(notAKey);
  }
  if (refusesReplacement(schema)) choices.push(fc.constantFrom(...UNDECODABLE));
  return fc.oneof(...choices);
}

function queryRequests(operation: Operation, valid: RawRequest): fc.Arbitrary<BadRequest>[] {
  const declared = operation.parameters.filter((p) => p.in === 'query');
  const names = new Set(declared.map((p) => p.name));
  const codes = ['invalid_query_parameter'];
  const choices: fc.Arbitrary<BadRequest>[] = [
    fc
      .stringMatching(/^[a-z_]{1,20}$/)
      .filter((name) => !names.has(name))
      .map((name) => ({
        what: `query:unknown ${name}`,
        request: { ...valid, path: `${valid.path}?${name}=1` },
        codes,
      })),
  ];
  for (const parameter of declared) {
    choices.push(
      queryValues(parameter).map((value) => ({
        what: `query:${parameter.name} ${value.slice(0, 40)}`,
        request: { ...valid, path: `${valid.path}?${parameter.name}=${value}` },
        codes,
      })),
    );
  }
  if (names.has('size')) {
    choices.push(
      fc.constant({
        what: 'query:twice size',
        request: { ...valid, path: `${valid.path}?size=1&size=2` },
        codes,
      }),
    );
  }
  return choices;
}

function headerRequests(operation: Operation, valid: RawRequest): fc.Arbitrary<BadRequest>[] {
  const header = operation.parameters.find(
    (p) => p.in === 'header' && p.name.toLowerCase() === PROJECT_HEADER,
  );
  if (!header) return [];
  const sent = (value: string) => ({ ...valid, headers: { ...valid.headers, [PROJECT_HEADER]: value } });
  const visible = fc.string({ minLength: 1, maxLength: 60 }).filter((s) => /^[\x21-\x7e]+$/.test(s));
  const values = fc.oneof(
    visible.filter((s) => !/^[0-9A-Za-z]{27}$/.test(s)),
    fc.stringMatching(/^[0-9A-Za-z]{27}$/),
    fc.constant('a'.repeat(10_000)),
  );
  const choices: fc.Arbitrary<BadRequest>[] = [
    values.map((value) => ({
      what: `header:project ${value.slice(0, 40)}`,
      request: sent(value),
      codes: ['unknown_project'],
    })),
  ];
  if (header.required) {
    const headers = { ...valid.headers };
    delete headers[PROJECT_HEADER];
    choices.push(
      fc.constant({
        what: 'header:project missing',
        request: { ...valid, headers },
        codes: ['missing_project_id'],
      }),
    );
  }
  return choices;
}

/**
 * Bad requests of `operation`, each breaking one thing of its valid request aimed at
 * `world`. An operation without a body also gets, at times, a body it must ignore.
 */
export function badRequests(
  operation: Operation,
  world: World,
  valid: RawRequest,
  options: { bodyLimitBytes: number },
): fc.Arbitrary<BadRequest> {
  const single = fc.oneof(
    ...bodyRequests(operation, valid, options.bodyLimitBytes),
    ...pathRequests(operation, world, valid),
    ...queryRequests(operation, valid),
    ...headerRequests(operation, valid),
  );
  if (operation.body || operation.method === 'head') return single;
  const noise = fc.option(
    fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
      fc.constant('{"not json'),
    ),
    {
      freq: 3,
    },
  );
  return fc.tuple(single, noise).map(([bad, ignored]) =>
    ignored === null
      ? bad
      : {
          ...bad,
          what: `${bad.what} +ignored body`,
          request: withBody(bad.request, ignored, { 'content-type': 'application/json' }),
        },
  );
}
