import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { parseAllDocuments, type YAMLError } from 'yaml';
import { CliError, problemCount } from '../errors.js';
import { findSpecFiles } from './files.js';

/** Where a spec was written: a file (as shown to the user) and its document, from 1. */
export interface Origin {
  file: string;
  document: number;
}

/** The specs to install, each with its origin at the same index. */
export interface LoadedSpecs {
  specs: Record<string, unknown>[];
  origins: Origin[];
  files: number;
}

export const describeOrigin = (origin: Origin) => `${origin.file}:${origin.document}`;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `file` (links resolved) lies inside the directory `root` (links resolved). */
function isInside(root: string, file: string): boolean {
  const path = relative(realpathSync(root), realpathSync(file));
  return path !== '' && !path.startsWith('..') && !isAbsolute(path);
}

/**
 * A task step's `source` replaced by `code` holding the file's content (a path relative to
 * the YAML file), in the same place among the step's members. A source must lie inside the
 * deployed directory: a set of YAML files cannot make deploy upload any file the deployer
 * can read. Problems are collected.
 */
function inlineSources(
  spec: Record<string, unknown>,
  yamlFile: string,
  root: string,
  problems: string[],
  at: string,
) {
  const data = spec.data;
  if (spec.type !== 'task' || !isObject(data) || !Array.isArray(data.steps)) return;
  data.steps = data.steps.map((step: unknown, index) => {
    if (!isObject(step) || typeof step.source !== 'string') return step;
    const pointer = `/data/steps/${index}/source`;
    if (step.code !== undefined) {
      problems.push(`${at}: ${pointer}: a step has code or source, not both`);
      return step;
    }
    const file = resolve(dirname(yamlFile), step.source);
    let code: string;
    try {
      if (!isInside(root, file)) {
        problems.push(`${at}: ${pointer}: ${step.source} is outside the deployed directory`);
        return step;
      }
      code = readFileSync(file, 'utf8');
    } catch (error) {
      problems.push(
        `${at}: ${pointer}: cannot read ${step.source}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      );
      return step;
    }
    return Object.fromEntries(
      Object.entries(step).map(([key, value]) => (key === 'source' ? ['code', code] : [key, value])),
    );
  });
}

/** `FILE:LINE:COLUMN: REASON`, as compilers say it, rather than the parser's lines with a snippet. */
function describeYamlError(file: string, error: YAMLError): string {
  const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  const position = error.linePos?.[0];
  return position ? `${file}:${position.line}:${position.col}: ${reason}` : `${file}: ${reason}`;
}

/**
 * Reads every spec of the YAML files under `dir` (several documents per file; empty
 * documents skipped) and inlines step sources. Every local problem is reported at once.
 */
export function loadSpecs(dir: string, cwd = process.cwd()): LoadedSpecs {
  const files = findSpecFiles(dir);
  const loaded: LoadedSpecs = { specs: [], origins: [], files: files.length };
  const problems: string[] = [];
  for (const file of files) {
    const shown = relative(cwd, file) || file;
    const documents = parseAllDocuments(readFileSync(file, 'utf8'));
    documents.forEach((document, index) => {
      const origin = { file: shown, document: index + 1 };
      const at = describeOrigin(origin);
      // The parser's first error is the mistake; the next ones are mostly its consequences.
      const [error] = document.errors;
      if (error) {
        problems.push(describeYamlError(shown, error));
        return;
      }
      const spec: unknown = document.toJS();
      // An empty document (after a final ---, say) describes nothing.
      if (spec === null || spec === undefined) return;
      if (!isObject(spec)) {
        problems.push(`${at}: a resource spec must be a mapping (type, version, name, data)`);
        return;
      }
      inlineSources(spec, file, dir, problems, at);
      loaded.specs.push(spec);
      loaded.origins.push(origin);
    });
  }
  if (problems.length > 0) {
    throw new CliError(`${problemCount(problems.length)} in the resource files; nothing was sent`, problems);
  }
  return loaded;
}

/**
 * `file:document: /pointer: reason` for each validation error of the server: pointers into
 * the request body (`/specs/N/...`) are mapped back to the spec's file and document.
 */
export function describeValidationErrors(
  errors: { pointer: string; reason: string }[],
  origins: Origin[],
): string[] {
  return errors.map(({ pointer, reason }) => {
    const match = /^\/specs\/(\d+)(\/.*)?$/.exec(pointer);
    const origin = match ? origins[Number(match[1])] : undefined;
    if (!match || !origin) return `${pointer || '/'}: ${reason}`;
    return `${describeOrigin(origin)}: ${match[2] ?? '/'}: ${reason}`;
  });
}
