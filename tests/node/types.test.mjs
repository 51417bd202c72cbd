// The type declarations against `tsc --strict` with lib es2022 only (no DOM lib, no @types/node):
// a typed usage file (tests/types/usage.ts, whose @ts-expect-error lines must stay errors), the
// same with the DOM lib (tests/types/dom), and every ```js snippet of README.md and docs/**/*.md as
// its own module.
// A snippet may rely on `ak` (a loaded module) and on what an HTML comment just above it declares
// (`<!-- types: declare const q: AK.Tensor; -->`, AK being the package's types); anything else it
// uses it must import. Snippets that use fetch, document or location are checked with the DOM lib.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const TYPES = path.join(ROOT, 'tests/types');

function tsc(project) {
  try {
    execFileSync(process.execPath, [TSC, '-p', project], { cwd: ROOT, encoding: 'utf8' });
    return '';
  } catch (e) {
    return e.stdout + e.stderr;
  }
}

test('the declarations accept the typed usage and refuse its misuses (lib es2022 only)', () => {
  assert.equal(tsc(TYPES), '');
});

test('with the DOM lib, the API takes the real URL, Response, File and FileList', () => {
  assert.equal(tsc(path.join(TYPES, 'dom')), '');
});

/** README.md and every .md under docs/, relative to the repository. */
export function markdownFiles() {
  const files = ['README.md'];
  (function walk(dir) {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) files.push(rel);
    }
  })('docs');
  return files;
}

/** A markdown file's ```js blocks, each with the declarations of the HTML comment right above it. */
export function markdownSnippets(file) {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const snippets = [];
  for (let i = 0; i < lines.length; i++) {
    // A block may be indented (inside a list item).
    const open = /^( *)```js$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1];
    const end = lines.indexOf(`${indent}\`\`\``, i + 1);
    const above = /^ *<!-- types: (.*) -->$/.exec(lines[i - 1] ?? '');
    const code = lines.slice(i + 1, end).map((l) => l.slice(indent.length)).join('\n');
    snippets.push({ file, line: i + 2, code, declarations: above?.[1] ?? '' });
    i = end;
  }
  return snippets;
}

/** The README's ```js blocks. */
export function readmeSnippets() {
  return markdownSnippets('README.md');
}

test('every snippet of the README and docs/ type-checks under tsc --strict', () => {
  const files = markdownFiles();
  const snippets = files.flatMap(markdownSnippets);
  assert.ok(readmeSnippets().length >= 3, `${readmeSnippets().length} README snippets`);
  assert.ok(markdownSnippets('docs/api.md').length >= 20, `${markdownSnippets('docs/api.md').length} docs/api.md snippets`);
  const dir = path.join(TYPES, '.readme');
  fs.rmSync(dir, { recursive: true, force: true });
  for (const lib of ['es2022', 'dom']) fs.mkdirSync(path.join(dir, lib), { recursive: true });
  try {
    for (const { file, line, code, declarations } of snippets) {
      const dom = /\b(fetch|document|location)\b/.test(code);
      const preamble = [
        "import type * as AK from 'attnkit';",
        // console is the host's (browser or Node), not part of lib es2022.
        dom ? '' : 'declare const console: { log(...values: unknown[]): void };',
        /\bconst ak\b/.test(code) ? '' : 'declare const ak: AK.Attnkit;',
        declarations,
      ].filter(Boolean).join(' ');
      // One line of preamble, so that tsc's line numbers are the file's minus an offset.
      const name = `md-${files.indexOf(file)}-line-${line}.ts`;
      fs.writeFileSync(path.join(dir, dom ? 'dom' : 'es2022', name), `${preamble}\n${code}\nexport {};\n`);
    }
    const base = path.join(TYPES, 'tsconfig.json');
    fs.writeFileSync(path.join(dir, 'es2022', 'tsconfig.json'), JSON.stringify({ extends: base, include: ['*.ts'] }));
    fs.writeFileSync(path.join(dir, 'dom', 'tsconfig.json'),
      JSON.stringify({ extends: base, compilerOptions: { lib: ['es2022', 'dom'] }, include: ['*.ts'] }));
    // Errors name the markdown line: md-F-line-N.ts(k, c) is line N + k - 2 of file F.
    const errors = (tsc(path.join(dir, 'es2022')) + tsc(path.join(dir, 'dom'))).replace(
      /[^\s]*md-(\d+)-line-(\d+)\.ts\((\d+),(\d+)\)/g,
      (_, f, n, k, c) => `${files[Number(f)]}:${Number(n) + Number(k) - 2}:${c}`);
    assert.equal(errors, '');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
