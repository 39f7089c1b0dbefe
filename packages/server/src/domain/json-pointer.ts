/** A JSON pointer (RFC 6901) made of `base` and the given tokens, escaped. */
export function pointer(base: string, ...tokens: (string | number)[]): string {
  return tokens.reduce<string>(
    (path, token) => `${path}/${String(token).replaceAll('~', '~0').replaceAll('/', '~1')}`,
    base,
  );
}
