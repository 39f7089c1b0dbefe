// Bundles the program's ES modules into dist/bundle/, which bin/pipewright-server.js runs: ours
// and the libraries written as ES modules (kysely alone is 526 files). Node 20 loads ES modules
// one by one, with no code cache, and loading about 750 of them was half of the server's time to
// listening (bench/README.md, stall). Libraries written as CommonJS stay outside, loaded by Node
// as usual: http/validator.ts patches modules of express-openapi-validator, which must be the
// very ones it runs.
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const outdir = join(dist, 'bundle');

/** Whether the package named at the start of `specifier`, as Node finds it from `fromDir`, is written as ES modules. */
function isEsModulePackage(specifier, fromDir) {
  const name = specifier.startsWith('@') ? specifier.split('/', 2).join('/') : specifier.split('/')[0];
  for (let dir = fromDir; ; dir = dirname(dir)) {
    try {
      return (
        JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).type === 'module'
      );
    } catch {
      // Not installed here: Node looks in the parent directory's node_modules, and so does this.
    }
    if (dir === dirname(dir)) return false;
  }
}

const esModulesOnly = {
  name: 'es-modules-only',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('node:') || !isEsModulePackage(args.path, args.resolveDir)
        ? { path: args.path, external: true }
        : undefined,
    );
    // Modules find files beside them (migrations, the spec, the spawner) from their own URL:
    // each keeps the URL of its file, computed from the bundle's, so that the bundle works
    // wherever the checkout is. The program's own modules are the exception: their threads
    // are bundled beside them.
    builder.onLoad({ filter: /\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url') || args.path.startsWith(dist)) return undefined;
      const own = `new URL(${JSON.stringify(relative(outdir, args.path))}, import.meta.url).href`;
      return {
        contents: source.replaceAll('import.meta.url', own),
        loader: 'js',
        resolveDir: dirname(args.path),
      };
    });
  },
};

// Chunks are named by their content: those of an earlier build would stay beside the new ones.
rmSync(outdir, { recursive: true, force: true });
await build({
  // The program, and the threads it starts (each a Node isolate of its own, which loads its
  // modules again: bundled, each takes about 5 MiB less).
  entryPoints: ['main.js', 'checkpoint-worker.js', 'purge-worker.js'].map((name) => join(dist, name)),
  outdir,
  // What modules import when needed (PostgreSQL's, with pg) goes in chunks of its own, loaded
  // then as before.
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [esModulesOnly],
  logLevel: 'warning',
});
