import type { Compilable, CompiledQuery } from 'kysely';

/**
 * Building a query with Kysely and compiling it costs 10 to 50 µs here: too much for the
 * statements run for every task and every request, whose shape never changes. A prepared query
 * is built and compiled once, with stand-ins for its arguments, and then only its parameters
 * change: running it costs what copying them costs.
 */

/** A stand-in for argument `index`, which reaches the query as a parameter, encoded by `encode`. */
class Slot {
  constructor(
    readonly index: number,
    readonly encode: (value: unknown) => unknown = (value) => value,
  ) {}
}

/**
 * `value` encoded by `encode` as a query's parameter, whether it is a value or a stand-in of a
 * prepared query (whose arguments are encoded at each run): for a fragment whose parameter is
 * not the value itself (a list given to SQLite as JSON).
 */
export function encodedParameter<T>(value: T, encode: (value: T) => unknown): unknown {
  if (value instanceof Slot) return new Slot(value.index, (v) => encode(value.encode(v) as T));
  return encode(value);
}

/**
 * A query built once by `build` and run with other arguments: `build` gets stand-ins for its
 * `arity` arguments, which may only be given to the query as values (where a parameter goes),
 * never decide its shape (no `if`, no `??`, no method of theirs called). A stand-in that does
 * not reach the query as a parameter is a mistake, caught at the first run.
 */
export function prepared<A extends unknown[], R>(
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
): (...args: A) => Compilable<R> {
  let compiled: CompiledQuery<R> | undefined;
  // For each parameter of the compiled query: the stand-in it is, or none for a constant.
  let slots: (Slot | undefined)[] = [];
  return (...args: A) => {
    if (!compiled) {
      const standIns = Array.from({ length: arity }, (_, index) => new Slot(index));
      compiled = build(...(standIns as unknown as A)).compile();
      slots = compiled.parameters.map((parameter) => (parameter instanceof Slot ? parameter : undefined));
      const used = new Set(slots.map((slot) => slot?.index));
      const unused = standIns.filter((slot) => !used.has(slot.index));
      if (unused.length > 0)
        throw new Error(`argument ${unused[0]?.index} of a prepared query is no parameter`);
    }
    const query = compiled;
    const parameters = slots.map((slot, i) => (slot ? slot.encode(args[slot.index]) : query.parameters[i]));
    return { compile: () => ({ ...query, parameters }) };
  };
}
