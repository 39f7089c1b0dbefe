import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError, type Schemas } from '@pipewright/client';
import { type RunningServer, startServer } from '@pipewright/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, exampleSets, fileContent } from './helpers/guide-examples.js';

// Every YAML example of the guides must deploy as the guide says: each one is installed
// (dry run) in a project of the real server, which checks all its rules, not only the schema.

const GUIDES = new URL('../../../openapi/guides/', import.meta.url);
const EXAMPLE_PROJECT = new URL('../../cli/example-project/', import.meta.url);
const guides = ['getting-started.md', 'resources.md'].map((name) => new URL(name, GUIDES));
const blocks = guides.flatMap((guide) => codeBlocks(guide));
const sets = exampleSets(blocks);

let server: RunningServer;
let projectId: string;

beforeAll(async () => {
  server = await startServer();
  const { data } = await server.client().POST('/projects', { body: { name: 'docs-examples' } });
  if (!data) throw new Error('the project was not created');
  projectId = data.id;
});

afterAll(async () => {
  await server?.stop();
});

/** The server's verdict on a set: the problems it reports, none when it would install it. */
async function problemsOf(specs: unknown[]): Promise<Schemas['JsvError'][]> {
  try {
    await server.client().PUT('/projects/id/{id}/resources', {
      params: { path: { id: projectId }, query: { 'dry-run': 'true' } },
      body: { specs: specs as Schemas['ResourceSpec'][] },
    });
    return [];
  } catch (error) {
    if (error instanceof ApiError && error.code === 'invalid_request_body') {
      return (error.data?.jsv_errors as Schemas['JsvError'][] | undefined) ?? [];
    }
    throw error;
  }
}

describe('the YAML examples of the guides', () => {
  it('are there: a project built file by file, and an example of each kind', () => {
    expect(blocks.filter((block) => block.path).length).toBeGreaterThanOrEqual(6);
    const kinds = new Set(sets.flatMap((set) => set.specs().map((spec) => spec.type)));
    expect([...kinds].sort()).toEqual(['command', 'pipeline', 'task', 'trigger']);
  });

  it.each(sets.map((set) => [set.what, set]))('%s installs', async (_what, set) => {
    expect(await problemsOf(set.specs())).toEqual([]);
  });

  it('would catch a broken example: a pipeline naming a task the set lacks', async () => {
    const [complete] = sets.slice(-1);
    const specs = (complete?.specs() ?? []).filter((spec) => spec.type !== 'task');
    expect(specs.length).toBeGreaterThan(0);
    expect((await problemsOf(specs)).map((problem) => problem.reason).join('\n')).toMatch(/unknown task/);
  });

  // The guide shows the files `pipewright init` writes: the same ones, once they exist.
  it.skipIf(!existsSync(EXAMPLE_PROJECT))('show the files of pipewright init as they are', () => {
    const shown = new Map<string, string>();
    for (const block of blocks) {
      const path = block.path?.replace(/^[^/]+\//, '');
      if (path && !shown.has(path)) shown.set(path, fileContent(block));
    }
    const files = readdirSync(EXAMPLE_PROJECT, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(fileURLToPath(EXAMPLE_PROJECT), join(entry.parentPath, entry.name)));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(new URL(file, EXAMPLE_PROJECT), 'utf8');
      expect(shown.get(file), file).toBe(text.replace(/\n$/, ''));
    }
  });
});
