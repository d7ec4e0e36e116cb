// Checks what `npm pack --dry-run` would publish: exactly the built modules,
// their declarations, the stylesheet, README, CHANGELOG, LICENSE and
// package.json — no sources, tests, example or lockfile — and no warning.

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--loglevel=warn'], { cwd: root, encoding: 'utf8' });
if (r.status !== 0) {
  console.error(`npm pack --dry-run failed (${r.status}):\n${r.stderr}`);
  process.exit(1);
}
if (/\bwarn/i.test(r.stderr)) {
  console.error(`npm pack --dry-run warned:\n${r.stderr}`);
  process.exit(1);
}
const [pack] = JSON.parse(r.stdout);
const files = pack.files.map((f) => f.path).sort();
const modules = ['context', 'index', 'NotificationBell', 'NotificationFeed', 'Preferences', 'useFeed', 'usePreferences'];
const expected = [
  'CHANGELOG.md',
  'LICENSE',
  'README.md',
  'package.json',
  'dist/styles.css',
  ...modules.flatMap((m) => [`dist/${m}.js`, `dist/${m}.d.ts`]),
].sort();
const missing = expected.filter((f) => !files.includes(f));
const extra = files.filter((f) => !expected.includes(f));
if (missing.length || extra.length) {
  console.error(`npm pack: missing ${JSON.stringify(missing)}, unexpected ${JSON.stringify(extra)}`);
  process.exit(1);
}
console.log(`npm pack --dry-run: ${pack.name}@${pack.version}, ${files.length} files, ${pack.size} bytes`);
