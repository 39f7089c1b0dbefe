// Bundles the program into one file, dist/pipewright.mjs, its dependencies inlined: a copy
// installed with `npm install -g`, or placed by the server for its tasks, needs nothing of this
// repository's node_modules.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

await build({
  entryPoints: [fileURLToPath(new URL('../src/main.ts', import.meta.url))],
  outfile: fileURLToPath(new URL('../dist/pipewright.mjs', import.meta.url)),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Dependencies written as CommonJS (undici) require Node's modules: an ES module has no require.
  banner: {
    js: "import { createRequire as pipewrightCreateRequire } from 'node:module';\nconst require = pipewrightCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
