import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  resolve: {
    alias: {
      // The typed client imports undici only to trust a given CA in Node; the browser trusts its own.
      undici: fileURLToPath(new URL('./src/api/undici-stub.ts', import.meta.url)),
    },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: 'dist',
    // No inline script anywhere: the server's Content-Security-Policy allows only 'self'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    rolldownOptions: {
      onwarn(warning, warn) {
        // React libraries mark their modules "use client", which means nothing to a browser-only app.
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
