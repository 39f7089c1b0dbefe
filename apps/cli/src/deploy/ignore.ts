import ignore, { type Ignore } from 'ignore';

/**
 * What deploy skips, as git would: the `ignore` library reads the files (globs, `**`, `[...]`
 * classes, a trailing `/` for directories, anchoring, `!` re-including, escapes).
 */

/** Skipped unless an ignore file re-includes them: no deploy wants a dependency's YAML files. */
export const DEFAULT_IGNORED = ['node_modules/'];

/** The rules of one ignore file, and the directory (relative to the deployed one, '' at its top) they apply in. */
export interface IgnoreRules {
  base: string;
  rules: Ignore;
}

export function ignoreRules(base: string, text: string | readonly string[]): IgnoreRules {
  return { base, rules: ignore().add(text) };
}

/**
 * Whether a path (relative to the deployed directory, with `/`) is skipped by a list of rules
 * that apply in order, as a directory's .gitignore applies after its parent's: the last file
 * that ignores or re-includes the path decides. A directory is tested with a trailing `/`, so
 * that patterns for directories only match it.
 */
export function isIgnored(
  layers: readonly IgnoreRules[],
  relativePath: string,
  isDirectory: boolean,
): boolean {
  let ignored = false;
  for (const { base, rules } of layers) {
    if (base !== '' && !relativePath.startsWith(`${base}/`)) continue;
    const path = base === '' ? relativePath : relativePath.slice(base.length + 1);
    const verdict = rules.test(isDirectory ? `${path}/` : path);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}
