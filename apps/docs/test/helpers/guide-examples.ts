import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { parseAllDocuments } from 'yaml';

// The examples of the docs page's guides, as readers copy them. A code block whose first
// line is a comment naming a path (`# hello/tasks.yaml`) is a file of the guide's project:
// the reader writes it there, and a later block of the same path replaces it (an edit).
// Any other ```yaml block is a complete set of resources on its own.

export interface CodeBlock {
  /** `guide.md:LINE`, the line of the opening fence. */
  where: string;
  language: string;
  text: string;
  /** The path the block names on its first line, for files of a project. */
  path?: string;
}

const FILE_COMMENT = /^# ([\w.-]+\/[\w./-]+)\s*$/;
const isYaml = (path: string) => /\.ya?ml$/.test(path);

/** Every fenced code block of a markdown file, in order. */
export function codeBlocks(file: URL): CodeBlock[] {
  const name = posix.basename(file.pathname);
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const fence = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && lines[i]?.trim() !== '```'; i += 1) body.push(lines[i] ?? '');
    if (i === lines.length) throw new Error(`${name}:${start + 1}: the code block is not closed`);
    const path = FILE_COMMENT.exec(body[0] ?? '')?.[1];
    const block = { where: `${name}:${start + 1}`, language: fence[1] ?? '', text: body.join('\n') };
    blocks.push(path ? { ...block, path } : block);
  }
  return blocks;
}

/** A block's text without the line naming its path: the content of the file. */
export const fileContent = (block: CodeBlock): string =>
  block.path ? block.text.split('\n').slice(1).join('\n') : block.text;

/** The resource specs of a YAML text, one per non-empty document; a syntax error throws. */
export function specsOf(text: string, where: string): Record<string, unknown>[] {
  return parseAllDocuments(text).flatMap((document) => {
    const [error] = document.errors;
    if (error) throw new Error(`${where}: ${error.message}`);
    const spec: unknown = document.toJS();
    if (spec === null || spec === undefined) return [];
    if (typeof spec !== 'object' || Array.isArray(spec))
      throw new Error(`${where}: a spec must be a mapping`);
    return [spec as Record<string, unknown>];
  });
}

/**
 * The specs of a project's YAML files, with each task step's `source` (relative to its YAML
 * file) sent as `code`, the content of that file of the project, as `pipewright deploy` does.
 */
function projectSpecs(files: ReadonlyMap<string, CodeBlock>): Record<string, unknown>[] {
  return [...files.values()]
    .filter((file) => file.path && isYaml(file.path))
    .flatMap((file) =>
      specsOf(fileContent(file), file.where).map((spec) => {
        if (spec.type !== 'task') return spec;
        const data = spec.data as { steps?: Record<string, unknown>[] } | undefined;
        for (const step of data?.steps ?? []) {
          if (typeof step.source !== 'string' || 'code' in step) continue;
          const path = posix.join(posix.dirname(file.path ?? ''), step.source);
          const source = files.get(path);
          if (!source) throw new Error(`${file.where}: no block shows ${path}, the source of a step`);
          step.code = fileContent(source);
        }
        return spec;
      }),
    );
}

export interface ExampleSet {
  /** What the set is: a block, or a project's files after a block. */
  what: string;
  /** Its specs, parsed when asked for: a mistake fails the test of its set only. */
  specs(): Record<string, unknown>[];
}

/**
 * The sets a reader of `blocks` can deploy: each standalone YAML block, and each project as
 * it stands after each of its YAML file blocks (its files so far, the latest version of each).
 */
export function exampleSets(blocks: readonly CodeBlock[]): ExampleSet[] {
  const projects = new Map<string, Map<string, CodeBlock>>();
  const sets: ExampleSet[] = [];
  for (const block of blocks) {
    if (!block.path) {
      if (block.language === 'yaml')
        sets.push({ what: block.where, specs: () => specsOf(block.text, block.where) });
      continue;
    }
    const project = block.path.split('/')[0] ?? '';
    const files = projects.get(project) ?? new Map<string, CodeBlock>();
    projects.set(project, files);
    files.set(block.path, block);
    if (!isYaml(block.path)) continue;
    const written = new Map(files);
    sets.push({
      what: `project ${project} after ${block.where} (${block.path})`,
      specs: () => projectSpecs(written),
    });
  }
  return sets;
}
