import { openapiDocument } from '@pipewright/types';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { JsvError } from '../../domain/errors.js';
import { explainSchemaErrors } from '../../domain/resources/schema-errors.js';
import { describeSchemaError } from '../../domain/resources/schema-reasons.js';
import { quotedList } from '../../domain/resources/wording.js';

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
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: false, useDefaults: false });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components });

  const { propertyName, mapping } = components.schemas.ResourceSpec.discriminator;
  const validators = new Map<unknown, ValidateFunction>(
    Object.entries(mapping).map(([tag, ref]) => {
      const validate = ajv.getSchema(`${DOCUMENT_ID}${ref}`);
      if (!validate) throw new Error(`the spec has no schema ${ref}`);
      return [tag, validate];
    }),
  );
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
    validate(spec: unknown): JsvError[] {
      if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return [notAnObject];
      const tag = (spec as Record<string, unknown>)[propertyName];
      const validate = validators.get(tag);
      // Without a known type nothing else of the spec can be judged.
      if (!validate) return [tag === undefined ? untyped : mistyped];
      return validate(spec) ? [] : explainSchemaErrors(validate.errors ?? []);
    },
  };
}
