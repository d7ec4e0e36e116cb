// Regenerates src/schema.ts from the /openapi.json of the herald binary
// (HERALD_BIN, default <repo>/target/debug/herald) with openapi-typescript:
// `npm run gen:types`. With `--check` it writes nothing and fails (exit 1)
// when the committed file differs from a fresh generation, or when the
// document has an Admin API operation (`/admin/v1/...`) that the SDK's
// operation table (src/operations.ts, read from dist/: build first) does not
// cover, or the table names one the document lacks, or a method the client
// does not have. `--from FILE` reads a saved document instead of starting the
// binary.

import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fetchOpenapi } from './herald-server.mjs';
import { SCHEMA_FILE, generate, adminOperations, coverageProblems } from './openapi-drift.mjs';

const args = process.argv.slice(2);
const check = args.includes('--check');
const i = args.indexOf('--from');
const doc = i >= 0 ? JSON.parse(readFileSync(args[i + 1], 'utf8')) : await fetchOpenapi();
const fresh = await generate(doc);
const rel = path.relative(process.cwd(), SCHEMA_FILE);

if (!check) {
  writeFileSync(SCHEMA_FILE, fresh);
  console.log(`wrote ${rel} (${adminOperations(doc).size} Admin API operations in the document)`);
} else {
  let failed = false;
  const committed = existsSync(SCHEMA_FILE) ? readFileSync(SCHEMA_FILE, 'utf8') : '';
  if (committed !== fresh) {
    const a = committed.split('\n');
    const b = fresh.split('\n');
    let line = 0;
    while (line < a.length && a[line] === b[line]) line++;
    console.error(`${rel} is stale: it differs from the server's /openapi.json from line ${line + 1}`);
    console.error(`  committed: ${JSON.stringify(a[line] ?? '<end>')}\n  generated: ${JSON.stringify(b[line] ?? '<end>')}`);
    console.error('run `npm run gen:types` and commit the result');
    failed = true;
  }
  const problems = await coverageProblems(doc);
  for (const p of problems) console.error(`coverage: ${p}`);
  if (problems.length) failed = true;
  if (failed) process.exit(1);
  console.log(`${rel} is up to date; the SDK covers all ${adminOperations(doc).size} Admin API operations`);
}
