// The documentation against the code it describes:
// - docs/api.md names (in code: `name` or a code block) every export of web/attnkit.d.ts, every
//   public method, static method and property of its classes and interfaces, every key of the
//   object types they take or return (options, outputs), every string value those types allow
//   ('layernorm', 'ERR_BUSY', ...), read with the TypeScript compiler's parser;
// - every call or option that a heading of docs/api.md names (`ak.name(`, `.name(`, `{ key }`)
//   exists in the declarations;
// - the README's error table has every ErrorCode;
// - every relative link of README.md and docs/**/*.md reaches a file (and a heading, for #anchors).
// ATTNKIT_DTS and ATTNKIT_API_MD point the first checks at other files (to see them fail on a copy).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ts = createRequire(import.meta.url)('typescript');
const DTS = process.env.ATTNKIT_DTS ?? path.join(ROOT, 'web/attnkit.d.ts');
const API = process.env.ATTNKIT_API_MD ?? path.join(ROOT, 'docs/api.md');

/**
 * Every name a user of the declarations meets, with where it is declared: exported functions,
 * classes, interfaces and types; public members (methods, static methods, properties) of the
 * exported classes and interfaces; the keys of the object types in their signatures; string
 * literal values. Constructors, private members and index signatures have no name of their own.
 */
export function declaredNames(dtsText) {
  const sf = ts.createSourceFile('attnkit.d.ts', dtsText, ts.ScriptTarget.Latest, true);
  const names = new Map();
  const add = (name, where) => { if (!names.has(name)) names.set(name, where); };
  const has = (node, kind) => node.modifiers?.some((m) => m.kind === kind) ?? false;
  function walkType(node, where) {
    if (!node) return;
    // Omit<T, 'a' | 'b'>: the removed keys are T's, named there.
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === 'Omit') {
      walkType(node.typeArguments?.[0], where);
      return;
    }
    if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) add(node.literal.text, where);
    else if (ts.isTypeLiteralNode(node)) members(node.members, where);
    else ts.forEachChild(node, (child) => walkType(child, where));
  }
  function members(list, owner) {
    for (const m of list) {
      if (has(m, ts.SyntaxKind.PrivateKeyword)) continue;
      const name = m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) ? m.name.text : null;
      const where = name ? `${owner}.${name}` : owner;
      if (name) add(name, where);
      walkType(m.type, where);
      for (const p of m.parameters ?? []) walkType(p.type, where);
      for (const t of m.typeParameters ?? []) walkType(t.constraint, where);
    }
  }
  for (const s of sf.statements) {
    if (!has(s, ts.SyntaxKind.ExportKeyword) || !s.name) continue;
    const name = s.name.text;
    add(name, name);
    if (ts.isClassDeclaration(s) || ts.isInterfaceDeclaration(s)) members(s.members, name);
    else if (ts.isTypeAliasDeclaration(s)) walkType(s.type, name);
    else if (ts.isFunctionDeclaration(s)) {
      for (const p of s.parameters) walkType(p.type, name);
      walkType(s.type, name);
    }
  }
  return names;
}

/** Markdown without its fenced code blocks, and the blocks. */
function splitFences(md) {
  const blocks = [];
  const prose = md.replace(/^( *)(```+|~~~+)[^\n]*\n[\s\S]*?^\1\2[ \t]*$/gm, (block) => {
    blocks.push(block.slice(block.indexOf('\n') + 1, block.lastIndexOf('\n')));
    return '';
  });
  return { prose, blocks };
}

/** Inline code spans of markdown prose (they may run over a line break). */
function codeSpans(prose) {
  return [...prose.matchAll(/(`+)([^`][\s\S]*?)\1(?!`)/g)].map((m) => m[2]);
}

/** The words written as code (spans and blocks): identifiers, and hyphenated values as a whole. */
export function codeWords(md) {
  const { prose, blocks } = splitFences(md);
  const words = new Set();
  for (const text of [...codeSpans(prose), ...blocks]) {
    for (const w of text.match(/[\w$]+(?:-[\w$]+)*/g) ?? []) {
      words.add(w);
      for (const part of w.split('-')) words.add(part);
    }
  }
  return words;
}

/**
 * What the headings' code names: calls (`ak.rotary(`, `new ak.Embeddings(`, `.fromJSON(`,
 * `load(`) and the keys of their option objects (`{ base = 10000, layout, out }`).
 */
export function headingNames(md) {
  const { prose } = splitFences(md);
  const found = [];
  for (const line of prose.split('\n')) {
    if (!/^#{1,6} /.test(line)) continue;
    for (const span of codeSpans(line)) {
      for (const m of span.matchAll(/([A-Za-z_$][\w$]*)\s*\(/g)) found.push({ name: m[1], heading: line });
      for (const m of span.matchAll(/\{([^{}]*)\}/g)) {
        for (const part of m[1].split(/[,|]/)) {
          const key = /^\s*([A-Za-z_$][\w$]*)\s*(?:=.*)?$/.exec(part);
          if (key) found.push({ name: key[1], heading: line });
        }
      }
    }
  }
  return found;
}

/** Names of the declarations that the markdown does not write as code. */
export function undocumented(dtsText, md) {
  const words = codeWords(md);
  return [...declaredNames(dtsText)].filter(([name]) => !words.has(name)).map(([name, where]) => `${name} (${where})`);
}

/** Calls and options named by headings of the markdown that the declarations do not have. */
export function undeclared(dtsText, md) {
  const names = declaredNames(dtsText);
  return headingNames(md).filter(({ name }) => !names.has(name)).map(({ name, heading }) => `${name} in "${heading}"`);
}

const read = (file) => fs.readFileSync(file, 'utf8');

test('docs/api.md names every export, member, option key and value of attnkit.d.ts', () => {
  const names = declaredNames(read(DTS));
  assert.ok(names.size > 300, `${names.size} names`);
  for (const name of ['load', 'Attnkit', 'generateText', 'fromSentencePiece', 'threadsRunning', 'pastKeyValues', 'ERR_BUSY']) {
    assert.ok(names.has(name), name);
  }
  assert.deepEqual(undocumented(read(DTS), read(API)), []);
});

test('every call and option a heading of docs/api.md names exists in attnkit.d.ts', () => {
  const found = headingNames(read(API));
  assert.ok(found.length > 40, `${found.length} names in headings`);
  assert.deepEqual(undeclared(read(DTS), read(API)), []);
});

test('the checks fail when either side has a name the other lacks', () => {
  const dts = read(DTS);
  const md = read(API);
  // A method added to the declarations (in Attnkit, in an interface's type literal, as an option).
  const grown = dts
    .replace('  mallocInUse(): number;', '  mallocInUse(): number;\n  fakeMethodForTheTest(x: Floats): Tensor<Float32Array>;')
    .replace('  truncate?: boolean;', '  truncate?: boolean;\n  fakeOptionForTheTest?: \'fakeValueForTheTest\';');
  const before = new Set(undocumented(dts, md));
  assert.deepEqual(undocumented(grown, md).filter((n) => !before.has(n)).sort(), [
    'fakeMethodForTheTest (Attnkit.fakeMethodForTheTest)',
    'fakeOptionForTheTest (RotaryScalingOptions.fakeOptionForTheTest)',
    'fakeValueForTheTest (RotaryScalingOptions.fakeOptionForTheTest)',
  ]);
  // A heading for a function, a static factory and an option the declarations do not have.
  const heading = '### `ak.fakeFunction(x, { fakeKey = 1, out })`, `ak.Tokenizer.fromFake(text)`';
  const known = new Set(undeclared(dts, md));
  assert.deepEqual(undeclared(dts, `${md}\n${heading}\n`).filter((n) => !known.has(n)), [
    `fakeFunction in "${heading}"`, `fakeKey in "${heading}"`, `fromFake in "${heading}"`,
  ]);
});

test("the README's error table has every ErrorCode", () => {
  const sf = ts.createSourceFile('attnkit.d.ts', read(DTS), ts.ScriptTarget.Latest, true);
  const alias = sf.statements.find((s) => ts.isTypeAliasDeclaration(s) && s.name.text === 'ErrorCode');
  const codes = alias.type.types.map((t) => t.literal.text);
  assert.ok(codes.length >= 10, codes.join());
  const readme = read(path.join(ROOT, 'README.md'));
  assert.deepEqual(codes.filter((code) => !new RegExp(`^\\| \`${code}\` \\|`, 'm').test(readme)), []);
});

/** README.md and every .md under docs/. */
function markdownFiles() {
  const files = [path.join(ROOT, 'README.md')];
  (function walk(dir) {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) files.push(p);
    }
  })(path.join(ROOT, 'docs'));
  return files;
}

/** GitHub's anchors for a markdown file's headings (github-slugger's rule, duplicates numbered). */
function anchors(md) {
  const seen = new Map();
  const out = new Set();
  for (const line of splitFences(md).prose.split('\n')) {
    const h = /^#{1,6} +(.*?)#*\s*$/.exec(line);
    if (!h) continue;
    const text = h[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

test('every relative link of the README and docs/ reaches its file and heading', () => {
  const files = markdownFiles();
  assert.ok(files.some((f) => f.endsWith(path.join('docs', 'api.md'))));
  const broken = [];
  let count = 0;
  for (const file of files) {
    const md = read(file);
    const prose = splitFences(md).prose.replace(/(`+)[^`][\s\S]*?\1(?!`)/g, '');
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
      ...[...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]),
      ...[...prose.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g)].map((m) => m[1]),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:, ...
      count++;
      const [rel, anchor] = target.split('#');
      const dest = rel ? path.resolve(path.dirname(file), decodeURIComponent(rel)) : file;
      const where = `${path.relative(ROOT, file)}: ${target}`;
      if (!dest.startsWith(ROOT) || !fs.existsSync(dest)) broken.push(`${where} (no such file)`);
      else if (anchor !== undefined && dest.endsWith('.md') && !anchors(read(dest)).has(anchor)) {
        broken.push(`${where} (no such heading)`);
      }
    }
  }
  assert.ok(count > 30, `${count} relative links`);
  assert.deepEqual(broken, []);
});
