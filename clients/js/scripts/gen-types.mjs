// Regenerates src/api-types.ts from the /openapi.json of the herald binary
// (HERALD_BIN, default target/debug/herald): `npm run gen:types`.
// With `--from FILE` it reads a saved document instead of starting the binary.

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './openapi-to-ts.mjs';
import { fetchOpenapi } from './herald-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const TYPES_FILE = path.join(here, '..', 'src', 'api-types.ts');

const i = process.argv.indexOf('--from');
const doc = i > 0 ? JSON.parse(readFileSync(process.argv[i + 1], 'utf8')) : await fetchOpenapi();
writeFileSync(TYPES_FILE, generate(doc));
console.log(`wrote ${path.relative(process.cwd(), TYPES_FILE)}`);
