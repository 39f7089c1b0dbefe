import type { JsvError } from '../errors.js';
import { pointer } from '../json-pointer.js';
import { NAME_PATTERN } from '../names.js';
import { list, quotedList } from './wording.js';

/**
 * The members of a JSON Schema validation error (Ajv's, with `allErrors` and `verbose`)
 * that the explanations read. Declared here so that the domain does not depend on Ajv.
 */
export interface SchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  /** The value of the keyword: for `oneOf`, the branches. */
  schema?: unknown;
  /** The value that failed. */
  data?: unknown;
  /** Set on the errors of a `propertyNames` schema: the offending member name. */
  propertyName?: string;
}

// The patterns of the spec that say something simple, said in words.
const PATTERN_REASONS: Record<string, string> = {
  [NAME_PATTERN.source]:
    'must be a name: 1 to 100 lowercase letters, digits, "_" or "-", starting with a letter or a digit',
  // Text handed to processes (ProcessText, ParameterValue): C strings end at NUL.
  '^[^\\x00]*$': 'must not contain NUL (U+0000), which a process cannot receive',
};

const FORMAT_REASONS: Record<string, string> = {
  'json-pointer': 'must be a JSON pointer (RFC 6901) such as "/branch", or "" for the whole value',
  'date-time': 'must be a date and time (RFC 3339) with its offset, such as "2026-11-22T10:00:00Z"',
};

const ARTICLES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function oneOrMany(limit: number, unit: string): string {
  return `${limit} ${unit}${limit === 1 ? '' : 's'}`;
}

/** Where an error points (the member at fault rather than its parent) and why, in words. */
export function describeSchemaError(error: SchemaError, context = ''): JsvError {
  const { params } = error;
  const limit = Number(params.limit);
  let tokens: string[] = [];
  let reason: string;
  switch (error.keyword) {
    case 'required':
      tokens = [String(params.missingProperty)];
      reason = 'is required';
      break;
    case 'additionalProperties':
      tokens = [String(params.additionalProperty)];
      reason = 'is an unknown member';
      break;
    case 'false schema':
      reason = 'is not allowed';
      break;
    case 'type': {
      const types = Array.isArray(params.type) ? params.type : String(params.type).split(',');
      reason = `must be ${list(types.map((type) => ARTICLES[type] ?? type))}`;
      break;
    }
    case 'enum':
      reason = `must be ${quotedList(params.allowedValues as unknown[])}`;
      break;
    case 'const':
      reason = `must be ${JSON.stringify(params.allowedValue)}`;
      break;
    case 'pattern':
      reason = PATTERN_REASONS[String(params.pattern)] ?? `must match the pattern ${params.pattern}`;
      break;
    case 'format':
      reason = FORMAT_REASONS[String(params.format)] ?? `must be a valid ${params.format}`;
      break;
    case 'minimum':
      reason = `must be at least ${limit}`;
      break;
    case 'maximum':
      reason = `must be at most ${limit}`;
      break;
    case 'minLength':
      reason = limit === 1 ? 'must not be empty' : `must be at least ${oneOrMany(limit, 'character')} long`;
      break;
    case 'maxLength':
      reason = `must be at most ${oneOrMany(limit, 'character')} long`;
      break;
    case 'minItems':
      reason = limit === 1 ? 'must not be empty' : `must have at least ${oneOrMany(limit, 'item')}`;
      break;
    case 'maxItems':
      reason = `must have at most ${oneOrMany(limit, 'item')}`;
      break;
    case 'uniqueItems':
      // Point at the later copy: the earlier one is where the reader expects it.
      tokens = [String(params.i)];
      reason = `repeats item ${params.j}`;
      break;
    case 'maxProperties':
      reason = limit === 0 ? 'must be empty' : `must have at most ${oneOrMany(limit, 'member')}`;
      break;
    default:
      reason = error.message ?? `fails the "${error.keyword}" rule`;
  }
  if (error.propertyName !== undefined) {
    tokens = [error.propertyName];
    reason = `invalid member name: ${reason}`;
  }
  return {
    pointer: pointer(error.instancePath, ...tokens),
    reason: context ? `${reason} ${context}` : reason,
  };
}
