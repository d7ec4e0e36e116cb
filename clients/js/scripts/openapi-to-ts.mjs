// Turns the component schemas of Herald's /openapi.json into TypeScript
// declarations (src/api-types.ts). Used by scripts/gen-types.mjs to write the
// file and by test/types.test.mjs to check the committed file has not drifted
// from what the binary serves. Fails loudly on a schema construct it does not know.

const KNOWN = new Set([
  'type', 'properties', 'required', 'description', 'example', 'examples', 'format', '$ref', 'oneOf', 'enum',
  'additionalProperties', 'propertyNames', 'items', 'minimum', 'maximum', 'minLength', 'maxLength', 'maxItems',
  'pattern', 'default',
  // validation and documentation only: no bearing on the type
  'title', 'writeOnly', 'readOnly', 'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'uniqueItems', 'dependentSchemas',
  // combinators and literals
  'anyOf', 'allOf', 'const',
]);

const refName = (ref) => {
  const m = /^#\/components\/schemas\/([A-Za-z0-9_]+)$/.exec(ref);
  if (!m) throw new Error(`unsupported $ref ${ref}`);
  return m[1];
};

const ident = (k) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k));

function comment(text, indent) {
  if (!text) return '';
  const lines = String(text).trim().split('\n');
  return `${indent}/** ${lines.join(`\n${indent} * `).replace(/\*\//g, '*\\/')} */\n`;
}

/** The TypeScript type of one schema (inline), at `indent` for nested objects. */
function typeOf(s, indent, where) {
  if (s === true || s === undefined || (typeof s === 'object' && Object.keys(s).every((k) => k === 'description'))) {
    return 'unknown';
  }
  for (const k of Object.keys(s)) if (!KNOWN.has(k)) throw new Error(`unsupported keyword ${k} at ${where}`);
  if (s.$ref) return refName(s.$ref);
  // properties that hold together with one of some alternatives (e.g. "recipients, a topic, or both")
  if (s.anyOf && s.properties) {
    const alts = s.anyOf.map((x, i) => typeOf(x, indent, `${where}.anyOf.${i}`)).join(' | ');
    return `${objectBody(s, indent, where)} & (${alts})`;
  }
  if (s.oneOf) return s.oneOf.map((x, i) => typeOf(x, indent, `${where}.oneOf.${i}`)).join(' | ');
  if (s.anyOf) return s.anyOf.map((x, i) => typeOf(x, indent, `${where}.anyOf.${i}`)).join(' | ');
  if (s.allOf) return s.allOf.map((x, i) => `(${typeOf(x, indent, `${where}.allOf.${i}`)})`).join(' & ');
  if ('const' in s) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  // an alternative that only adds properties is an object
  const types = Array.isArray(s.type) ? s.type : [s.type ?? (s.properties ? 'object' : undefined)];
  return types.map((t) => {
    switch (t) {
      case 'string': return 'string';
      case 'integer':
      case 'number': return 'number';
      case 'boolean': return 'boolean';
      case 'null': return 'null';
      case 'array': return `Array<${typeOf(s.items, indent, `${where}.items`)}>`;
      case 'object': {
        if (s.properties) return objectBody(s, indent, where);
        if (s.additionalProperties === false) return 'Record<string, never>';
        return `Record<string, ${typeOf(s.additionalProperties, indent, `${where}.additionalProperties`)}>`;
      }
      default: throw new Error(`unsupported type ${t} at ${where}`);
    }
  }).join(' | ');
}

function objectBody(s, indent, where) {
  const required = new Set(s.required || []);
  const inner = indent + '  ';
  let out = '{\n';
  for (const key of Object.keys(s.properties).sort()) {
    const p = s.properties[key];
    out += comment(p.description, inner);
    out += `${inner}${ident(key)}${required.has(key) ? '' : '?'}: ${typeOf(p, inner, `${where}.${key}`)};\n`;
  }
  return out + indent + '}';
}

/** The whole generated module for an OpenAPI document. */
export function generate(doc) {
  const schemas = doc.components && doc.components.schemas;
  if (!schemas) throw new Error('no components.schemas in the document');
  let out = '// GENERATED from herald\'s /openapi.json by scripts/gen-types.mjs: do not edit.\n';
  out += '// The User and Admin API resources as TypeScript types (test/types.test.mjs fails\n';
  out += '// when this file and the binary\'s document drift apart: rerun `npm run gen:types`).\n';
  out += `// OpenAPI ${doc.openapi}, ${doc.info && doc.info.title} ${doc.info && doc.info.version}\n`;
  for (const name of Object.keys(schemas).sort()) {
    const s = schemas[name];
    out += '\n' + comment(s.description, '');
    const t = typeOf(s, '', name);
    // an interface for a plain object; a type alias for anything else (unions too)
    const plain = s.properties && !s.oneOf && !s.anyOf && !s.allOf && !Array.isArray(s.type);
    if (plain) out += `export interface ${name} ${t}\n`;
    else out += `export type ${name} = ${t};\n`;
  }
  return out;
}
