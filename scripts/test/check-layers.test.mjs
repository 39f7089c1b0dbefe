import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkLayers } from '../check-layers.mjs';

// Each case is a small source tree in a temp directory: a layered tree that holds, plus the
// files of the case. The last test runs the command on a copy of the server's own source.

const SCRIPT = fileURLToPath(new URL('../check-layers.mjs', import.meta.url));
const SERVER_SRC = fileURLToPath(new URL('../../packages/server/src', import.meta.url));

const RULES = {
  layers: { domain: [], store: ['domain'], services: ['domain', 'store'], http: ['domain', 'services'] },
  packages: { 'better-sqlite3': ['store'] },
  exceptions: [],
};

const HOLDING = {
  'domain/errors.ts': 'export class Oops extends Error {}\n',
  'store/index.ts': "import type { Oops } from '../domain/errors.js';\nexport * from './rows.store.js';\n",
  'store/rows.store.ts': "import Database from 'better-sqlite3';\nexport type Row = { id: string };\n",
  'services/index.ts':
    "import type { Row } from '../store/index.js';\nexport * from './resources/index.js';\n",
  'services/resources/index.ts': "export { diff } from './diff.js';\n",
  'services/resources/diff.ts': "import { Oops } from '../../domain/errors.js';\nexport const diff = 1;\n",
  'http/routes/rows.routes.ts': "import { diff } from '../../services/index.js';\n",
  'app.ts': "import { diff } from './services/index.js';\nimport type { Row } from './store/index.js';\n",
};

let root;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'check-layers '));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function tree(files) {
  for (const [path, text] of Object.entries({ ...HOLDING, ...files })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('checkLayers', () => {
  it('finds nothing in a tree whose layering holds', () => {
    expect(checkLayers(tree({}), RULES)).toEqual([]);
  });

  it.each([
    [
      'a layer importing one it may not, by a type',
      { 'http/rows.ts': "import type { Row } from '../store/index.js';\n" },
      'http/rows.ts: imports store/index.ts, http may import domain, services, not store',
    ],
    [
      'the domain importing anything of ours, by an export',
      { 'domain/rows.ts': "export { diff } from '../services/index.js';\n" },
      'domain/rows.ts: imports services/index.ts, domain may import nothing of ours, not services',
    ],
    [
      'a module past the index of another layer',
      { 'services/rows.ts': "import type { Row } from '../store/rows.store.js';\n" },
      'services/rows.ts: imports store/rows.store.ts, past its index: import store/index.ts',
    ],
    [
      'a dynamic import past an index',
      { 'services/lazy.ts': "export const rows = () => import('../store/rows.store.js');\n" },
      'services/lazy.ts: imports store/rows.store.ts, past its index: import store/index.ts',
    ],
    [
      'a module past the index of a subfolder of its own layer',
      { 'services/plans.ts': "import { diff } from './resources/diff.js';\n" },
      'services/plans.ts: imports services/resources/diff.ts, past its index: import services/resources/index.ts',
    ],
    [
      'a package outside the layers it belongs to',
      { 'services/raw.ts': "import Database from 'better-sqlite3';\n" },
      'services/raw.ts: imports better-sqlite3, which only store may import',
    ],
    [
      'a folder that is no layer',
      { 'events/intake.ts': 'export const intake = 1;\n' },
      'events/intake.ts: src/events/ is not a layer that scripts/check-layers.mjs knows: add it there',
    ],
  ])('reports %s', (_case, files, problem) => {
    expect(checkLayers(tree(files), RULES)).toEqual([problem]);
  });

  it('lets an exception through, and reports one that no import needs', () => {
    const files = { 'services/rows.ts': "import type { Row } from '../store/rows.store.js';\n" };
    const exceptions = ['services/rows.ts -> store/rows.store.ts', 'http/gone.ts -> store/index.ts'];
    expect(checkLayers(tree(files), { ...RULES, exceptions })).toEqual([
      'exception http/gone.ts -> store/index.ts is not needed any more: remove it from scripts/check-layers.mjs',
    ]);
  });
});

describe('check-layers.mjs', () => {
  it('fails, naming the import, when the server source breaks its layering', () => {
    const src = join(root, 'src');
    cpSync(SERVER_SRC, src, { recursive: true });
    writeFileSync(join(src, 'http/storage.ts'), "export { openStore } from '../store/index.js';\n");
    const run = spawnSync(process.execPath, [SCRIPT, src], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'http/storage.ts: imports store/index.ts, http may import domain, services, logger.ts, not store',
    );
  });
});
