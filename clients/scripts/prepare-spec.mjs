// Turns the bundled OpenAPI 3.1 spec into the OpenAPI 3.0 document that openapi-generator 4.3.1
// reads (the last version that runs offline here: later ones download their jar at run time).
//
//   node prepare-spec.mjs <bundled openapi.json> <output.json> <python|go>
//
// @apiture/openapi-down-convert does the conversion; the steps below only cover what it leaves
// in 3.1 form or what a generator cannot express. None of them changes what a client may send or
// must accept: the server still validates every request against the real spec.
import { readFileSync, writeFileSync } from 'node:fs';
import { Converter } from '@apiture/openapi-down-convert';

const [input, output, language] = process.argv.slice(2);
if (!input || !output || !['python', 'go'].includes(language ?? '')) {
  console.error('usage: node prepare-spec.mjs <openapi.json> <output.json> <python|go>');
  process.exit(2);
}

const spec = new Converter(JSON.parse(readFileSync(input, 'utf8'))).convert();
const schemas = spec.components.schemas;

// `info.summary` is 3.1 only. The long guide in `info.description` would be copied into the
// header of every generated file: a pointer to the guides replaces it.
spec.info.description = `${spec.info.summary} How to use this generated client, and its known limits: clients/README.md in the Pipewright repository. The API: the Pipewright docs page.`;
delete spec.info.summary;

for (const schema of Object.values(schemas)) {
  // Objects whose `oneOf` branches only constrain which of their properties go together
  // (TaskStep: `command` or `code`; CommandParameter, TaskRuntime, TriggerFilter): the branches
  // use boolean schemas, which 3.0 lacks, and generators would turn them into wrapper types.
  if (schema.properties && schema.oneOf?.every((branch) => !branch.$ref)) delete schema.oneOf;
}

// A parameter value is a string, a number or a boolean. 3.0 has no list of types: leave it
// untyped (any JSON value), which the generators map to `object` (Python) and `interface{}` (Go).
// Its pattern (no NUL in a string) goes too: the python generator only reads patterns of typed
// strings, and fails on one of an untyped schema.
if (Array.isArray(schemas.ParameterValue.type)) {
  delete schemas.ParameterValue.type;
  delete schemas.ParameterValue.pattern;
}

if (language === 'python') {
  // The `python` generator of 4.3.1 has no oneOf: it would read every resource spec as a task
  // spec and fail on the others. It gets a resource spec whose `data` is a plain dict instead;
  // the typed TaskSpec, PipelineSpec, CommandSpec and TriggerSpec models are still generated.
  const { description, discriminator } = schemas.ResourceSpec;
  schemas.ResourceSpec = {
    type: 'object',
    description,
    required: ['type', 'version', 'name', 'data'],
    properties: {
      type: { type: 'string', enum: Object.keys(discriminator.mapping), description: 'Kind of resource.' },
      version: { type: 'integer', enum: [1], description: 'Version of the spec format; always 1.' },
      name: { $ref: '#/components/schemas/Name' },
      description: { type: 'string', description: 'What the resource is for, shown to users.' },
      data: {
        type: 'object',
        additionalProperties: true,
        description: 'The data of a TaskSpec, PipelineSpec, CommandSpec or TriggerSpec, by `type`.',
      },
    },
  };
}

writeFileSync(output, `${JSON.stringify(spec, null, 2)}\n`);
