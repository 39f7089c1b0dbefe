import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../errors.js';
import { type IgnoreMatcher, parseIgnoreFile } from './ignore.js';

export const IGNORE_FILE = '.pipewrightignore';

const isSpecFile = (name: string) => /\.ya?ml$/.test(name);

/**
 * Every `*.yaml` and `*.yml` file under `dir`, recursively, in a stable order. Hidden files
 * and directories (a name starting with `.`) and what `.pipewrightignore` (at the top of
 * `dir`) matches are skipped. Symbolic links to files are followed, to directories not.
 */
export function findSpecFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CliError(`${dir} is not a directory`);
  const ignoreFile = join(dir, IGNORE_FILE);
  const ignored: IgnoreMatcher = existsSync(ignoreFile)
    ? parseIgnoreFile(readFileSync(ignoreFile, 'utf8'))
    : () => false;
  const found: string[] = [];
  const visit = (absolute: string, relative: string) => {
    const entries = readdirSync(absolute, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(absolute, entry.name);
      const relativePath = relative ? `${relative}/${entry.name}` : entry.name;
      const isDirectory = entry.isDirectory();
      const isFile =
        entry.isFile() || (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isFile());
      if (ignored(relativePath, isDirectory)) continue;
      if (isDirectory) visit(path, relativePath);
      else if (isFile && isSpecFile(entry.name)) found.push(path);
    }
  };
  visit(dir, '');
  return found;
}
