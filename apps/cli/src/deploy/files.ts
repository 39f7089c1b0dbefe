import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../errors.js';
import { DEFAULT_IGNORED, type IgnoreRules, ignoreRules, isIgnored } from './ignore.js';

export const IGNORE_FILE = '.pipewrightignore';
const GIT_IGNORE_FILE = '.gitignore';

const isSpecFile = (name: string) => /\.ya?ml$/.test(name);

/** The rules of an ignore file, when the directory has one. */
function rulesOf(dir: string, name: string, base: string): IgnoreRules[] {
  const file = join(dir, name);
  return existsSync(file) ? [ignoreRules(base, readFileSync(file, 'utf8'))] : [];
}

/**
 * Every `*.yaml` and `*.yml` file under `dir`, recursively, in a stable order. Skipped: hidden
 * files and directories (a name starting with `.`), `node_modules`, what the `.gitignore`
 * files of `dir` and of its subdirectories ignore (each in its own directory, the deeper ones
 * last, as git reads them), then what `dir/.pipewrightignore` says, which has the last word
 * (it may re-include with `!`). Symbolic links to files are followed, to directories not.
 */
export function findSpecFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CliError(`${dir} is not a directory`);
  const defaults = ignoreRules('', DEFAULT_IGNORED);
  const last = rulesOf(dir, IGNORE_FILE, '');
  const found: string[] = [];
  const visit = (absolute: string, relative: string, inherited: IgnoreRules[]) => {
    const gitRules = [...inherited, ...rulesOf(absolute, GIT_IGNORE_FILE, relative)];
    const layers = [defaults, ...gitRules, ...last];
    const entries = readdirSync(absolute, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(absolute, entry.name);
      const relativePath = relative ? `${relative}/${entry.name}` : entry.name;
      const isDirectory = entry.isDirectory();
      const isFile =
        entry.isFile() || (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isFile());
      if (isIgnored(layers, relativePath, isDirectory)) continue;
      if (isDirectory) visit(path, relativePath, gitRules);
      else if (isFile && isSpecFile(entry.name)) found.push(path);
    }
  };
  visit(dir, '', []);
  return found;
}
