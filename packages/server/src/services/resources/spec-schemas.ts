import { openapiDocument } from '@pipewright/types';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { JsvError } from '../../domain/errors.js';
import { explainSchemaErrors } from '../../domain/resources/schema-errors.js';
import { describeSchemaError } from '../../domain/resources/schema-reasons.js';
import { quotedList } from '../../domain/resources/wording.js';
import { nextTurn } from '../concurrency/time-slices.js';

// ajv-formats is CommonJS: under NodeNext its plugin is the module's `default` member.
const addFormats = ajvFormats.default;

const DOCUMENT_ID = 'openapi.json';

interface Discriminator {
  propertyName: string;
  mapping: Record<string, string>;
}

/**
 * Where the request body schema of `PUT /projects/id/{id}/resources` describes each spec.
 * The request validator accepts any value there: specs are validated here, by type, and the
 * resources service reports their problems along with those across specs, all at once.
 */
export const SPECS_SCHEMA_POINTER = '/components/schemas/ResourceSet/properties/specs/items';

/**
 * Validates resource specs against the schemas of the spec document, choosing the schema by
 * the discriminator of ResourceSpec (`type`), so that a spec only hears about its own type.
 * `validate` returns the problems of one spec, with pointers relative to the spec.
 */
export function createSpecValidator() {
  const components = structuredClone(openapiDocument.components) as {
    schemas: { ResourceSpec: { discriminator: Discriminator } };
  };
  // Every problem, each with its schema and value (`verbose`: explainSchemaErrors reads the
  // branches of a oneOf and the value they judge). Specs are stored exactly as installed:
  // no defaults filled in, no coercion. Not strict: OpenAPI adds keywords (discriminator).
  // The document is not checked against JSON Schema's own schema here (a fifth of the cost):
  // the request validator checks the whole spec as it starts, and the spec's lint (Redocly).
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict: false,
    useDefaults: false,
    validateSchema: false,
  });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components });

  const { propertyName, mapping } = components.schemas.ResourceSpec.discriminator;
  // Compiled on first use, or by `compile`: each type's takes 15-40 ms of the server's thread.
  const validators = new Map<unknown, ValidateFunction>();
  const validatorOf = (tag: unknown): ValidateFunction | undefined => {
    if (typeof tag !== 'string' || !Object.hasOwn(mapping, tag)) return undefined;
    let validate = validators.get(tag);
    if (!validate) {
      validate = ajv.getSchema(`${DOCUMENT_ID}${mapping[tag]}`);
      if (!validate) throw new Error(`the spec has no schema ${mapping[tag]}`);
      validators.set(tag, validate);
    }
    return validate;
  };
  const tags = Object.keys(mapping);

  // The problems that leave the schema of a spec unknown, worded like the others.
  const untyped = describeSchemaError(
    {
      instancePath: '',
      schemaPath: '#/required',
      keyword: 'required',
      params: { missingProperty: propertyName },
    },
    `(${quotedList(tags)})`,
  );
  const mistyped = describeSchemaError({
    instancePath: `/${propertyName}`,
    schemaPath: '#/discriminator',
    keyword: 'enum',
    params: { allowedValues: tags },
  });
  const notAnObject = describeSchemaError({
    instancePath: '',
    schemaPath: '#/type',
    keyword: 'type',
    params: { type: 'object' },
  });

  return {
    /** The types of resources, as the discriminator maps them. */
    types: new Set(tags),
    /** Compiles every type's validator now, one a turn of the event loop, so that requests get in between. */
    async compile(): Promise<void> {
      for (const tag of tags) {
        await nextTurn();
        validatorOf(tag);
      }
    },
    validate(spec: unknown): JsvError[] {
      if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return [notAnObject];
      const tag = (spec as Record<string, unknown>)[propertyName];
      const validate = validatorOf(tag);
      // Without a known type nothing else of the spec can be judged.
      if (!validate) return [tag === undefined ? untyped : mistyped];
      return validate(spec) ? [] : explainSchemaErrors(validate.errors ?? []);
    },
  };
}
