// Checks who imports whom in packages/server/src, so that the layering of CONVENTIONS.md holds
// by `npm run lint` rather than by habit. Two rules, on every import, export-from and dynamic
// import (type-only ones included: a type couples layers as much as a value does):
//
// 1. Layers. Each folder directly under src/ is a layer and imports only the layers it lists
//    below; files directly under src/ (app.ts, index.ts, ...) compose the layers and may import
//    any. A folder that the rules do not list is an error, so a new layer is placed on purpose.
//    Some npm packages belong to some layers only (better-sqlite3 to the store, Express to http).
// 2. Indexes. A module reaches into a folder that it is not in through that folder's index.ts
//    when the folder has one: the index is the folder's public surface. Folders without an
//    index (domain/, http/, scheduler/, sources/) are open (scheduler/ has none so that
//    retention.ts can load its purger alone, into a thread of its own). Within a folder,
//    modules import each other freely, and the rule applies again to any subfolder with an index.
//
// Known breaches are listed as exceptions, each with its reason; an exception that no import
// needs any more is an error too, so that the list only shrinks.
//
// Usage: node scripts/check-layers.mjs [SRC_DIR]   (default: packages/server/src)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

export const SERVER_RULES = {
  layers: {
    domain: [],
    store: ['domain'],
    services: ['domain', 'store'],
    http: ['domain', 'services', 'logger.ts'],
    runner: ['domain'],
    scheduler: ['domain', 'store', 'services', 'runner', 'logger.ts'],
    sources: ['domain', 'store', 'services', 'logger.ts'],
  },
  // Packages that only some layers (or files directly under src/) may import.
  packages: {
    'better-sqlite3': ['store'],
    kysely: ['store'],
    pg: ['store'],
    express: ['http', 'app.ts'],
    'express-openapi-validator': ['http'],
  },
  // Imports that break a rule today, each under its reason, as `from -> to` in src/.
  exceptions: [],
};

/** Every TypeScript source under `dir`, declaration files left out. */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names, as TypeScript with NodeNext resolves it (`./x.js` is `./x.ts`). */
function resolveRelative(from, specifier) {
  const path = resolve(dirname(from), specifier);
  return [path.replace(/\.js$/, '.ts'), path].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
}

/** The package a bare specifier names: `@scope/name` or `name`, without its subpath. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The layer of a file: its folder directly under src/, or its own name when it lies directly there. */
function unitOf(relativePath) {
  return relativePath.split('/')[0];
}

/** The index.ts a module outside it must go through to reach `target`, if that is not `target`. */
function requiredIndex(srcRoot, from, target) {
  const folders = relative(srcRoot, dirname(target)).split(sep).filter(Boolean);
  for (let depth = 1; depth <= folders.length; depth += 1) {
    const folder = join(srcRoot, ...folders.slice(0, depth));
    if (from.startsWith(folder + sep)) continue;
    const index = join(folder, 'index.ts');
    if (existsSync(index)) return index === target ? undefined : index;
  }
  return undefined;
}

/**
 * The breaches of `rules` in the sources under `srcRoot`, one sentence each, sorted. Empty when
 * the layering holds.
 */
export function checkLayers(srcRoot, rules) {
  const root = resolve(srcRoot);
  const posix = (path) => relative(root, path).split(sep).join('/');
  const exceptions = new Set(rules.exceptions);
  const used = new Set();
  const problems = [];

  for (const file of sources(root)) {
    const from = posix(file);
    const unit = unitOf(from);
    const isLayer = from.includes('/');
    if (isLayer && !(unit in rules.layers)) {
      problems.push(`${from}: src/${unit}/ is not a layer that scripts/check-layers.mjs knows: add it there`);
      continue;
    }
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (!specifier.startsWith('.')) {
        const allowed = rules.packages[packageName(specifier)];
        if (allowed && !allowed.includes(unit)) {
          problems.push(`${from}: imports ${specifier}, which only ${allowed.join(', ')} may import`);
        }
        continue;
      }
      const target = resolveRelative(file, specifier);
      if (!target) {
        problems.push(`${from}: cannot resolve ${specifier}`);
        continue;
      }
      if (!target.startsWith(root + sep)) {
        problems.push(`${from}: imports ${specifier}, outside src/`);
        continue;
      }
      const to = posix(target);
      const targetUnit = unitOf(to);
      const layerBreach =
        isLayer && targetUnit !== unit && !rules.layers[unit].includes(targetUnit)
          ? `${unit} may import ${rules.layers[unit].join(', ') || 'nothing of ours'}, not ${targetUnit}`
          : undefined;
      const index = requiredIndex(root, file, target);
      const indexBreach = index ? `past its index: import ${posix(index)}` : undefined;
      const breach = layerBreach ?? indexBreach;
      if (!breach) continue;
      if (exceptions.has(`${from} -> ${to}`)) used.add(`${from} -> ${to}`);
      else problems.push(`${from}: imports ${to}, ${breach}`);
    }
  }
  for (const exception of exceptions) {
    if (!used.has(exception)) {
      problems.push(`exception ${exception} is not needed any more: remove it from scripts/check-layers.mjs`);
    }
  }
  return problems.sort();
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isMain) {
  const srcRoot = process.argv[2] ?? fileURLToPath(new URL('../packages/server/src', import.meta.url));
  const problems = checkLayers(srcRoot, SERVER_RULES);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`${problems.length} import(s) break the layering (rules: scripts/check-layers.mjs)`);
    process.exit(1);
  }
}
