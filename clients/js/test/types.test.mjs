// Drift checks: src/api-types.ts must be exactly what scripts/gen-types.mjs
// generates from the /openapi.json the herald binary serves now, and the
// generator itself must turn schema constructs into the right TypeScript.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { generate } from '../scripts/openapi-to-ts.mjs';
import { fetchOpenapi } from '../scripts/herald-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

test("src/api-types.ts matches the binary's /openapi.json (else: npm run gen:types)", async () => {
  const doc = await fetchOpenapi();
  const committed = readFileSync(path.join(here, '..', 'src', 'api-types.ts'), 'utf8');
  const want = generate(doc);
  if (committed !== want) {
    const a = committed.split('\n');
    const b = want.split('\n');
    const i = a.findIndex((l, k) => l !== b[k]);
    assert.fail(`api-types.ts drifted from /openapi.json at line ${i + 1}:\n  committed: ${a[i]}\n  generated: ${b[i]}\nrun \`npm run gen:types\``);
  }
  // the resources the client uses are there
  for (const name of ['FeedEntry', 'FeedPage', 'FeedMeta', 'MarkAllResult', 'User', 'Preferences', 'UserChannel', 'PushSubscription', 'ErrorBody', 'ErrorCode']) {
    assert.ok(doc.components.schemas[name], `${name} in /openapi.json`);
    assert.match(committed, new RegExp(`export (interface|type) ${name}\\b`));
  }
});

test('the generator: required vs optional, nullable, refs, enums, maps, arrays; unknown keywords fail', () => {
  const out = generate({
    openapi: '3.1.0',
    info: { title: 'T', version: '1' },
    components: {
      schemas: {
        Color: { enum: ['red', 'green'], type: 'string' },
        Thing: {
          description: 'A thing.',
          type: 'object',
          required: ['id', 'tags'],
          properties: {
            id: { type: 'string', format: 'uuid' },
            color: { oneOf: [{ $ref: '#/components/schemas/Color' }, { type: 'null' }] },
            tags: { type: 'array', items: { type: 'string' } },
            extra: { type: 'object', additionalProperties: { type: 'integer' } },
            note: { type: ['string', 'null'] },
          },
        },
      },
    },
  });
  assert.match(out, /export type Color = "red" \| "green";/);
  assert.match(out, /\/\*\* A thing\. \*\/\nexport interface Thing \{/);
  assert.match(out, /  id: string;/);
  assert.match(out, /  color\?: Color \| null;/);
  assert.match(out, /  tags: Array<string>;/);
  assert.match(out, /  extra\?: Record<string, number>;/);
  assert.match(out, /  note\?: string \| null;/);
  assert.throws(() => generate({ components: { schemas: { X: { not: {} } } } }), /unsupported keyword not/);
  // combinators and literals: unions, intersections, constants
  const u = generate({ components: { schemas: { U: { oneOf: [
    { type: 'object', title: 'a', properties: { k: { const: 'a' } }, required: ['k'] },
    { type: 'object', properties: { k: { const: 'b' }, s: { type: 'string', writeOnly: true } } },
  ] }, V: { anyOf: [{ $ref: '#/components/schemas/U' }, { type: 'null' }] } } } });
  assert.match(u, /export type U = \{\n  k: "a";\n\} \| \{\n  k\?: "b";\n  s\?: string;\n\};/);
  assert.match(u, /export type V = U \| null;/);
});
