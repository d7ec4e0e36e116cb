// Builds the example app into example/dist/ with esbuild: main.tsx against the
// package's built dist/ (so the example uses what would be published), React
// in production mode, and index.html copied beside app.js and app.css.

import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, 'dist');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: path.join(here, 'main.tsx') },
  bundle: true,
  format: 'esm',
  target: 'es2020',
  jsx: 'automatic',
  minify: true,
  sourcemap: false,
  outdir: out,
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});
copyFileSync(path.join(here, 'index.html'), path.join(out, 'index.html'));
console.log('built example/dist/');
