import type { Schemas } from '@pipewright/client';
import { UsageError } from './errors.js';

type Parameter = Schemas['CommandParameter'];
type Value = Schemas['ParameterValue'];

function parseValue(parameter: Parameter, text: string): Value {
  switch (parameter.type) {
    case 'number': {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) {
        throw new UsageError(`parameter ${parameter.name} is a number: "${text}" is not one`);
      }
      return value;
    }
    case 'boolean':
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw new UsageError(`parameter ${parameter.name} is a boolean: true or false, not "${text}"`);
    default:
      if (parameter.values && !parameter.values.includes(text)) {
        throw new UsageError(
          `parameter ${parameter.name} must be one of ${parameter.values.join(', ')}, not "${text}"`,
        );
      }
      return text;
  }
}

/**
 * The values of `KEY=VALUE` arguments, each parsed by the declared type of its parameter.
 * Unknown, repeated and missing required parameters are refused here, before anything is
 * sent; defaults are left to the server.
 */
export function parseParameters(
  command: string,
  parameters: Parameter[],
  args: string[],
): Record<string, Value> {
  const hint = `see \`pipewright commands describe ${command}\``;
  const values: Record<string, Value> = {};
  for (const arg of args) {
    const equals = arg.indexOf('=');
    if (equals <= 0) throw new UsageError(`"${arg}" is not KEY=VALUE`);
    const name = arg.slice(0, equals);
    const parameter = parameters.find((candidate) => candidate.name === name);
    if (!parameter) {
      const known = parameters.map((candidate) => candidate.name).join(', ') || 'none';
      throw new UsageError(`command ${command} has no parameter ${name} (its parameters: ${known})`);
    }
    if (name in values) throw new UsageError(`parameter ${name} is given twice`);
    values[name] = parseValue(parameter, arg.slice(equals + 1));
  }
  const missing = parameters.filter(
    (parameter) => parameter.default === undefined && !(parameter.name in values),
  );
  if (missing.length > 0) {
    const names = missing.map((parameter) => parameter.name).join(', ');
    throw new UsageError(`command ${command} requires ${names}=VALUE (${hint})`);
  }
  return values;
}
