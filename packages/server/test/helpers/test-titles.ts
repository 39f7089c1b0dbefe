// Finds the tests a test file declares, read as text: the literal titles given to `it`,
// `test` and `describe`, and to the calls `it.each(...)` returns, placeholders and all.

/** A string literal: quoted, double-quoted, or a template without substitutions. */
const STRING = [
  String.raw`'((?:[^'\\\n]|\\.)*)'`,
  String.raw`"((?:[^"\\\n]|\\.)*)"`,
  String.raw`\`((?:[^\`\\$]|\\.|\$(?!\{))*)\``,
].join('|');
/** A string literal right after `it(`, `describe.skip(`, `test(`, or `)(` (the call it.each returns). */
const TITLE = new RegExp(String.raw`(?:\b(?:it|test|describe)(?:\.\w+)*\s*\(|\)\s*\()\s*(?:${STRING})`, 'g');
/** What vitest replaces in the title of an `each`: printf-style codes and `$name` members. */
const PLACEHOLDER = /%[sdifjo#]|\$[A-Za-z_][\w.]*/;

const unescapeLiteral = (text: string) =>
  text.replace(/\\(.)/g, (_match, char: string) => ({ n: '\n', t: '\t' })[char] ?? char);

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The titles of the tests and groups of a test file's source, `each` placeholders kept. */
function declaredTitles(source: string): string[] {
  return [...source.matchAll(TITLE)].map((match) => unescapeLiteral(match[1] ?? match[2] ?? match[3] ?? ''));
}

/** Whether `value` is written in `source` as a string or number literal: a case of an `each` table. */
function isLiteralOf(source: string, value: string): boolean {
  if (/^-?\d+(\.\d+)?$/.test(value))
    return new RegExp(String.raw`(?<![\w.])${escapeRegExp(value)}(?![\w.])`).test(source);
  return ["'", '"', '`'].some((quote) => source.includes(`${quote}${value}${quote}`));
}

/**
 * Whether `source` declares a test or group titled `title`: literally, or as a case of an
 * `each` whose template gives that title with values the source writes as literals
 * ('ticks %s on time' with 'a oneshot' in its table gives 'ticks a oneshot on time').
 */
export function declaresTitle(source: string, title: string): boolean {
  return declaredTitles(source).some((template) => {
    if (template === title) return true;
    if (!PLACEHOLDER.test(template)) return false;
    const pattern = new RegExp(`^${template.split(PLACEHOLDER).map(escapeRegExp).join('(.+?)')}$`);
    const values = pattern.exec(title)?.slice(1);
    return values?.every((value) => isLiteralOf(source, value)) ?? false;
  });
}
