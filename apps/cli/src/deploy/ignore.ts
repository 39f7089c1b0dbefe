/**
 * The `.pipewrightignore` of a deploy directory: gitignore-like, kept simple. One glob a
 * line; blank lines and `#` comments are skipped. `*` matches within a path segment, `?`
 * one character of it, `**` any number of segments. A pattern with a `/` at its start or in
 * its middle is relative to the deploy directory; otherwise it matches at any depth. A
 * trailing `/` matches directories only. `!` re-includes what an earlier line ignored; the
 * last matching line wins. An ignored directory is skipped with everything in it.
 */
export type IgnoreMatcher = (relativePath: string, isDirectory: boolean) => boolean;

interface Rule {
  regexp: RegExp;
  negated: boolean;
  directoryOnly: boolean;
}

function globToRegExp(glob: string): string {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob.charAt(index);
    if (glob.startsWith('**/', index)) {
      source += '(?:.*/)?';
      index += 2;
    } else if (glob.startsWith('**', index)) {
      source += '.*';
      index += 1;
    } else if (char === '*') {
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else {
      source += char.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
    }
  }
  return source;
}

function parseRule(line: string): Rule | undefined {
  let pattern = line.trimEnd();
  if (pattern === '' || pattern.startsWith('#')) return undefined;
  const negated = pattern.startsWith('!');
  if (negated) pattern = pattern.slice(1);
  const directoryOnly = pattern.endsWith('/');
  if (directoryOnly) pattern = pattern.slice(0, -1);
  const anchored = pattern.includes('/');
  if (pattern.startsWith('/')) pattern = pattern.slice(1);
  if (pattern === '') return undefined;
  const body = globToRegExp(pattern);
  return { regexp: new RegExp(anchored ? `^${body}$` : `(?:^|/)${body}$`), negated, directoryOnly };
}

/** The matcher of the file's text; paths are relative to the deploy directory, with `/`. */
export function parseIgnoreFile(text: string): IgnoreMatcher {
  const rules = text.split(/\r?\n/).flatMap((line) => parseRule(line) ?? []);
  return (relativePath, isDirectory) => {
    let ignored = false;
    for (const rule of rules) {
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.regexp.test(relativePath)) ignored = !rule.negated;
    }
    return ignored;
  };
}
