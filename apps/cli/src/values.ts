import type { Invocation } from './command.js';

/** A boolean option's value. */
export const flag = (invocation: Invocation, name: string): boolean => invocation.values[name] === true;

/** A string option's value, undefined when not given. */
export function option(invocation: Invocation, name: string): string | undefined {
  const value = invocation.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** The argument at `index`; the command's arity guarantees it is there. */
export function argument(invocation: Invocation, index: number): string {
  const value = invocation.positionals[index];
  if (value === undefined) throw new Error(`argument ${index} is missing despite the arity`);
  return value;
}
