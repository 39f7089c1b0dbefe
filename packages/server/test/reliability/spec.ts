import { openapiDocument } from '@pipewright/types';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

// The operations of the spec as data, for tests that cover every route without listing
// them: their parameters, bodies and responses, and a check of an answer against them.

export type Json = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Json;
}

export interface Operation {
  id: string;
  method: 'get' | 'head' | 'post' | 'put' | 'delete';
  /** The path template under /v0: `/projects/id/{id}`. */
  path: string;
  parameters: Parameter[];
  body?: { mediaType: string; schema: Json; example: unknown };
  /** Response objects by status, references resolved. */
  responses: Record<string, Json>;
  /** It takes no API key (an empty `security`): webhook deliveries. */
  public: boolean;
  /** Its answer is a live stream (`text/event-stream`), which does not end by itself. */
  streams: boolean;
}

/** Follows `$ref`s (internal ones: the bundle keeps only those) until a value that is none. */
export function resolve(node: unknown): Json {
  let current = node as Json;
  while (typeof current?.$ref === 'string') {
    const tokens = current.$ref.replace(/^#\//, '').split('/');
    current = tokens.reduce<Json>(
      (value, token) => value[token.replaceAll('~1', '/').replaceAll('~0', '~')] as Json,
      openapiDocument,
    );
  }
  return current;
}

const METHODS = ['get', 'head', 'post', 'put', 'delete'] as const;

function operationsOf(document: Json): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const parameters = [
        ...((item.parameters as unknown[]) ?? []),
        ...((operation.parameters as unknown[]) ?? []),
      ].map((p) => {
        const parameter = resolve(p);
        return {
          name: parameter.name as string,
          in: parameter.in as Parameter['in'],
          required: parameter.required === true,
          schema: resolve(parameter.schema),
        };
      });
      const content = (operation.requestBody ? resolve(operation.requestBody).content : {}) as Record<
        string,
        Json
      >;
      const [mediaType, media] = Object.entries(content)[0] ?? [];
      found.push({
        id: operation.operationId as string,
        method,
        path,
        parameters,
        ...(mediaType && media
          ? { body: { mediaType, schema: resolve(media.schema), example: media.example } }
          : {}),
        responses: Object.fromEntries(
          Object.entries(operation.responses as Json).map(([status, response]) => [
            status,
            resolve(response),
          ]),
        ),
        public: Array.isArray(operation.security) && operation.security.length === 0,
        streams:
          'text/event-stream' in ((resolve((operation.responses as Json)['200'])?.content as Json) ?? {}),
      });
    }
  }
  return found;
}

/** Every operation of the spec. */
export const OPERATIONS: readonly Operation[] = operationsOf(openapiDocument);

/** The request path of `operation` with its path parameters replaced (already encoded). */
export function pathOf(operation: Operation, values: Record<string, string>): string {
  return `/v0${operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => values[name] ?? '')}`;
}

const DOCUMENT_ID = 'openapi.json';
const ajv = new Ajv2020({ allErrors: true, strict: false });
ajvFormats.default(ajv);
ajv.addFormat('regex', true);
ajv.addSchema({ $id: DOCUMENT_ID, components: openapiDocument.components });

/** The schema with its references made absolute, into the document added to ajv. */
function anchored(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(anchored);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' ? `${DOCUMENT_ID}${value}` : anchored(value),
    ]),
  );
}

const validators = new Map<string, ValidateFunction>();

function validatorOf(key: string, schema: unknown): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(anchored(schema) as Json);
    validators.set(key, validate);
  }
  return validate;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A stream's first message as the spec describes its messages: an object of its `event`, its
 * `id` and its `data` (one line of JSON).
 */
function firstEvent(text: string): Json {
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ''));
  }
  return { event: fields.get('event'), id: fields.get('id'), data: JSON.parse(fields.get('data') ?? '') };
}

/**
 * What is wrong with `answer` as a response of `operation` according to the spec: its
 * status is not listed, or its content type or body does not match. Undefined when it
 * matches.
 */
export function specProblem(operation: Operation, answer: Answer): string | undefined {
  const response = operation.responses[String(answer.status)];
  if (!response) return `${operation.id} does not list status ${answer.status}`;
  if (operation.method === 'head') return answer.text === '' ? undefined : 'HEAD answered with a body';
  const content = response.content as Record<string, Json> | undefined;
  if (!content) return answer.text === '' ? undefined : `status ${answer.status} has no body in the spec`;
  const mediaType = String(answer.headers['content-type'] ?? '').split(';')[0] ?? '';
  const media = content[mediaType];
  if (!media) return `content type ${mediaType || '(none)'} is not listed for ${answer.status}`;
  let body: unknown = answer.text;
  try {
    if (mediaType === 'application/json') body = JSON.parse(answer.text);
    if (mediaType === 'text/event-stream') body = firstEvent(answer.text);
  } catch {
    return `the body is not ${mediaType === 'application/json' ? 'JSON' : 'an event of JSON data'}`;
  }
  const validate = validatorOf(`${operation.id} ${answer.status} ${mediaType}`, media.schema);
  if (validate(body)) return undefined;
  return `the body does not match the spec: ${ajv.errorsText(validate.errors)}`;
}
