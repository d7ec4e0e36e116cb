// Builds herald-react into dist/: tsc emits the ESM modules and their .d.ts,
// and the stylesheet is copied as dist/styles.css (`herald-react/styles.css`).

import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], {
  stdio: 'inherit',
});
copyFileSync(path.join(root, 'src/styles.css'), path.join(root, 'dist/styles.css'));
console.log('built dist/');
