// Builds the example app into example/dist/ with esbuild: main.tsx against the
// package's built dist/ (so the example uses what would be published), React
// in production mode, and index.html copied beside app.js and app.css.
// `--react18` builds it into example/dist-react18/ with React 18 instead
// (example/react18/, its own npm ci), the oldest React the peer range allows.

import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const react18 = process.argv.includes('--react18');
const out = path.join(here, react18 ? 'dist-react18' : 'dist');

// every import of react and react-dom (the package's, herald-client's, the
// example's) resolved from example/react18/node_modules
const useReact18 = {
  name: 'react18',
  setup(b) {
    const dir = path.join(here, 'react18');
    b.onResolve({ filter: /^react(-dom)?(\/.*)?$/ }, async (args) => {
      if (args.pluginData === 'react18') return undefined;
      const r = await b.resolve(args.path, { resolveDir: dir, kind: args.kind, pluginData: 'react18' });
      if (r.errors.length) return { errors: r.errors };
      return { path: r.path };
    });
  },
};

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
  plugins: react18 ? [useReact18] : [],
  logLevel: 'warning',
});
copyFileSync(path.join(here, 'index.html'), path.join(out, 'index.html'));
console.log(`built ${path.relative(path.dirname(here), out)}/`);
