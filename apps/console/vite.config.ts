import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The console's build: two pages (the console at `/`, the GraphQL IDE that the API serves at
 * GET /graphql) into dist/console, every asset hashed under /assets. JSX goes through esbuild's
 * automatic runtime; nothing is loaded from outside the bundle.
 */
export default defineConfig({
  root: here('.'),
  base: '/',
  publicDir: false,
  esbuild: { jsx: 'automatic' },
  // The API's limits, from the one dependency-free library the console shares with it.
  resolve: { alias: { '@weft/contract': here('../../libs/contract/src/index.ts') } },
  // The IDE's monaco workers (graphiql/setup-workers/vite) split into chunks: module workers.
  worker: { format: 'es' },
  build: {
    outDir: here('../../dist/console'),
    emptyOutDir: true,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 6000,
    rollupOptions: {
      input: { console: here('index.html'), ide: here('ide.html') },
      // Libraries built for React Server Components start their modules with "use client";
      // bundling drops it, harmlessly, and Rollup warns once per module (about a hundred
      // lines). Only that warning is silenced; every other one passes through.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  logLevel: 'warn',
});
