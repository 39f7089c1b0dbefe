import type { Parameter, ParameterValue } from '../resources/parameters.js';

// Values of command and task parameters once checked (resources/parameters.ts): completed
// with defaults, and turned into environment variables where a parameter names one.

export function withDefaults(
  declared: readonly Parameter[],
  given: Readonly<Record<string, ParameterValue>>,
): Record<string, ParameterValue> {
  const values: Record<string, ParameterValue> = {};
  for (const parameter of declared) {
    const value = Object.hasOwn(given, parameter.name) ? given[parameter.name] : parameter.default;
    if (value !== undefined) values[parameter.name] = value;
  }
  return values;
}

/** `{VAR: value}` for each parameter with `environment`: numbers and booleans as JSON text. */
export function parameterEnvironment(
  declared: readonly Parameter[],
  values: Readonly<Record<string, ParameterValue>>,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const parameter of declared) {
    const value = values[parameter.name];
    if (parameter.environment && value !== undefined) environment[parameter.environment] = String(value);
  }
  return environment;
}
