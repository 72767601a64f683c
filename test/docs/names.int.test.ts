import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/**
 * House rules for comments and docs (docs/decisions/README.md): a code comment says what and why,
 * never history (no issue numbers, no measured figures: those go to commit messages and
 * bench/RESULTS.md), and every file, function and route a doc names exists.
 */

function walk(dir: string, keep: (f: string) => boolean): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (f === 'node_modules' || f.startsWith('.')) return [];
    return statSync(p).isDirectory() ? walk(p, keep) : keep(p) ? [p] : [];
  });
}

/** Every comment of a TypeScript file with its 1-based line, found by the compiler's own scanner. */
function commentsOf(file: string, text: string): Array<{ line: number; text: string }> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const seen = new Set<number>();
  const out: Array<{ line: number; text: string }> = [];
  const add = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      out.push({ line: sf.getLineAndCharacterOfPosition(r.pos).line + 1, text: text.slice(r.pos, r.end) });
    }
  };
  // Trivia sits at some node's start, after some node's end (a comment before a closing brace
  // follows the last statement) or its separator, or after an opening bracket (an empty block);
  // scanning those places finds every comment without building token nodes, which is far slower.
  const at = (pos: number) => {
    add(ts.getLeadingCommentRanges(text, pos));
    add(ts.getTrailingCommentRanges(text, pos));
  };
  const visit = (node: ts.Node) => {
    at(node.pos);
    at(node.end);
    if (text[node.end] === ',' || text[node.end] === ';') at(node.end + 1);
    if (node.kind !== ts.SyntaxKind.SourceFile) {
      const start = node.getStart(sf);
      if ('{(['.includes(text[start])) at(start + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out.sort((a, b) => a.line - b.line);
}

/** An issue or defect number: the word (singular or plural, any case), then digits, maybe after `#`. */
const ISSUE_RE = /\b(?:issue|defect)s?\s?#?\d+/i;
/**
 * A measured figure: any µs/ns amount (no limit is that small), an approximation (`~40`), a
 * "measured … <n>", a speed-up (`2× faster`), a percentage or a request rate. Limits such as
 * "5 MiB" or "30 s" are specification, not measurement, and stay.
 */
const FIGURE_RE = /\d\s?(?:µs|ns)\b|~\s?\d|\bmeasured\b[^.]*\d|\d\s?[x×]\s+(?:faster|slower|the)\b|\d\s?%|req\/s/i;

/** Each file's comments, one line each, parsed once for all the checks. */
const parsed = new Map<string, Array<{ line: number; flat: string }>>();
function flatComments(f: string): Array<{ line: number; flat: string }> {
  let found = parsed.get(f);
  if (!found) {
    found = commentsOf(f, readFileSync(f, 'utf8')).map((c) => ({ line: c.line, flat: c.text.replace(/\s*\n\s*\*?\s*/g, ' ') }));
    parsed.set(f, found);
  }
  return found;
}

/** `file:line: text` of every comment of `files` whose one-line form matches `re`. */
function offending(files: string[], re: RegExp): string[] {
  return files.flatMap((f) => flatComments(f)
    .filter((c) => re.test(c.flat))
    .map((c) => `${f}:${c.line}: ${c.flat.slice(0, 160)}`));
}

const srcFiles = walk('src', (f) => f.endsWith('.ts'));

describe('comments in src say what and why, never history', () => {
  it('the comment scanner sees line and block comments and not strings', () => {
    const text = "// issue 3 here\nconst a = 'issue 4'; /* defect 5 */\n/**\n * ~40 µs\n */\nexport const b = `~1 µs ${a}`;\n"
      + "try { f(); } catch { /* issue 6 */ }\nconst c = [\n  1, // issue 7\n  '// issue 8',\n];\n";
    const found = commentsOf('x.ts', text);
    expect(found.map((c) => c.line)).toEqual([1, 2, 3, 7, 9]);
    expect(found.filter((c) => ISSUE_RE.test(c.text)).length).toBe(4);
    expect(found.filter((c) => FIGURE_RE.test(c.text)).length).toBe(1);
  });

  it('the patterns catch the forms history takes and leave limits alone', () => {
    for (const s of ['issue 12', 'Issue 16:', 'defects 1–2', 'issue #4', 'defect 10']) expect(s).toMatch(ISSUE_RE);
    for (const s of ['~40 µs', 'cost 28 µs', 'measured here: 3 ms', '2× faster', '15-22 %', '3000 req/s', '~5 ms']) expect(s).toMatch(FIGURE_RE);
    for (const s of ['capped at 10 MiB', 'the 50 ms grace', 'at most 30 s', 'the issue a user reports', 'Unread is measured two ways']) {
      expect(s).not.toMatch(FIGURE_RE);
      expect(s).not.toMatch(ISSUE_RE);
    }
  });

  it('no comment in src or test names an issue or defect number', () => {
    expect(srcFiles.length).toBeGreaterThan(100);
    expect(offending([...srcFiles, ...walk('test', (f) => f.endsWith('.ts'))], ISSUE_RE)).toEqual([]);
  });

  it('no test title or other text of a test file names an issue or defect number', () => {
    const own = relative('.', new URL(import.meta.url).pathname);
    const lines = walk('test', (f) => f.endsWith('.ts') && f !== own)
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ f, i, line })))
      .filter(({ line }) => ISSUE_RE.test(line))
      .map(({ f, i, line }) => `${f}:${i + 1}: ${line.trim().slice(0, 160)}`);
    expect(lines).toEqual([]);
  });

  it('no comment in src quotes a measured figure (they belong in bench/RESULTS.md)', () => {
    expect(offending(srcFiles, FIGURE_RE)).toEqual([]);
  });
});

/** Every doc the rule covers: README.md and everything under docs/. */
const docs = ['README.md', ...walk('docs', (f) => f.endsWith('.md'))];
/** Top-level folders of the repository and the layers under src/: a path starting with one is ours. */
const ROOTS = new Set([
  ...readdirSync('.').filter((f) => !f.startsWith('.') && f !== 'node_modules' && statSync(f).isDirectory()),
  ...readdirSync('src').filter((f) => statSync(join('src', f)).isDirectory()),
]);
/** A path-like name: folders, then a file with one of the extensions the repository holds. */
const PATH_RE = /(?<![\w/.~<>$-])((?:[A-Za-z0-9_.-]+\/)+[A-Za-z0-9_.*-]+\.(?:ts|mjs|js|cjs|cc|h|md|json|gyp|sh))(?![\w/])/g;

/** Whether `name` (a path named in `doc`) is a file of the repository; a glob needs one match. */
function exists(doc: string, name: string): boolean {
  const candidates = [name, join('src', name), join(dirname(doc), name)];
  if (name.includes('*')) {
    const glob = (c: string) => new RegExp(`^${c.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
    return candidates.some((c) => existsSync(dirname(c)) && readdirSync(dirname(c)).some((f) => glob(c).test(join(dirname(c), f))));
  }
  // dist/ is the build of src/: a built file exists when its source does.
  const built = /^dist\/(.+)\.js$/.exec(name);
  if (built && [`src/${built[1]}.ts`].some((c) => existsSync(c))) return true;
  return candidates.some((c) => existsSync(c));
}

describe('docs name only files, functions and routes that exist', () => {
  it('every repository path named in README.md and docs/ exists', () => {
    const named = docs.flatMap((doc) => [...readFileSync(doc, 'utf8').matchAll(PATH_RE)]
      .map((m) => m[1].replace(/^\.\//, ''))
      .filter((p) => ROOTS.has(p.split('/')[0]))
      .map((p) => ({ doc, p })));
    expect(named.length).toBeGreaterThan(100);
    expect(named.filter(({ doc, p }) => !exists(doc, p)).map(({ doc, p }) => `${doc}: ${p}`)).toEqual([]);
  });

  it('every source file named by its bare name in backticks exists somewhere in the repository', () => {
    const files = new Set(['src', 'test', 'bench', 'bin', 'native', 'web', 'scripts', 'examples']
      .flatMap((d) => walk(d, () => true)).map((p) => p.split('/').pop() as string));
    const missing = docs.flatMap((doc) => [...readFileSync(doc, 'utf8').matchAll(/`([A-Za-z0-9_-]+\.(?:ts|mjs|cc|h))`/g)]
      .filter((m) => !files.has(m[1])).map((m) => `${doc}: ${m[1]}`));
    expect(missing).toEqual([]);
  });

  it('every function named as `name()` (or `Type.name()`) is an identifier of the code', () => {
    const code = ['src', 'native', 'test/helpers', 'test/setup', 'bin', 'scripts', 'bench']
      .flatMap((d) => walk(d, (f) => /\.(ts|js|mjs|cc|h)$/.test(f))).map((f) => readFileSync(f, 'utf8')).join('\n');
    const ids = new Set(code.match(/[A-Za-z_$][\w$]*/g));
    const named = docs.flatMap((doc) => [...readFileSync(doc, 'utf8').matchAll(/`((?:[A-Za-z_$][\w$]*[.#])*[A-Za-z_$][\w$]*)\([^`]*\)`/g)]
      .map((m) => ({ doc, name: m[1] })));
    expect(named.length).toBeGreaterThan(20);
    const missing = named.filter(({ name }) => name.split(/[.#]/).some((part) => !ids.has(part)));
    expect(missing.map(({ doc, name }) => `${doc}: ${name}()`)).toEqual([]);
  });

  it('every camelCase or PascalCase name in backticks (`streamCommand`, `LoomSystem.submit`) is an identifier of the code', () => {
    // Names of dependencies and of npm, which the docs name on purpose.
    const theirs = new Set(['resolveSpawn', 'cancelAll', 'createMcpExpressApp', 'optionalDependencies', 'allowScripts']);
    const ids = new Set(['src', 'native', 'test', 'bin', 'scripts', 'bench', 'web']
      .flatMap((d) => walk(d, (f) => /\.(ts|js|mjs|cc|h|html)$/.test(f))).flatMap((f) => readFileSync(f, 'utf8').match(/[A-Za-z_$][\w$]*/g) ?? []));
    const camel = /^[a-z]+[A-Z]\w*$|^[A-Z][a-z0-9]+[A-Z]\w*$/;
    const named = docs.flatMap((doc) => [...readFileSync(doc, 'utf8').matchAll(/`((?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*)`/g)]
      .map((m) => ({ doc, parts: m[1].split('.') }))
      .filter(({ parts }) => parts.some((p) => camel.test(p))));
    expect(named.length).toBeGreaterThan(50);
    const missing = named.filter(({ parts }) => parts.some((p) => !ids.has(p) && !theirs.has(p)));
    expect(missing.map(({ doc, parts }) => `${doc}: ${parts.join('.')}`)).toEqual([]);
  });

  it('every HTTP route named as `METHOD /path` is one the daemon registers', () => {
    const http = walk('src', (f) => f.endsWith('.ts') && /^src\/(http|features|inspector)\//.test(f))
      .map((f) => readFileSync(f, 'utf8')).join('\n');
    const resources = [...readFileSync('src/domain/wire.ts', 'utf8').matchAll(/resource: '(\/\w+)'/g)].map((m) => m[1]);
    const literals = [...http.matchAll(/['`](\/[a-z][\w/:{}*.-]*)['`]/g)].map((m) => m[1]);
    const registered = [...literals, ...resources, ...resources.map((r) => `${r}/:id`), '/', '/fs/{*path}']
      .map((p) => p.split('/').filter(Boolean).map((s) => (s.startsWith('{*') ? '**' : /^[:{<]/.test(s) ? '*' : s)));
    const matches = (doc: string[], pat: string[]) => pat.every((s, i) => s === '**' ? i < doc.length : i < doc.length && (s === '*' || s === doc[i] || doc[i] === '*'))
      && (pat.length === doc.length || pat[pat.length - 1] === '**');
    const named = docs.flatMap((doc) => [...readFileSync(doc, 'utf8').matchAll(/\b(?:GET|POST|PUT|DELETE|PATCH)(?:\/(?:GET|POST|PUT|DELETE|PATCH))* (\/[A-Za-z0-9_./{}:<>*-]*)/g)]
      .map((m) => ({ doc, route: m[1].replace(/[.]+$/, '') })));
    expect(named.length).toBeGreaterThan(20);
    const segments = (route: string) => route.split('/').filter(Boolean).map((s) => (/^[:{<]/.test(s) ? '*' : s));
    const missing = named.filter(({ route }) => !registered.some((pat) => matches(segments(route), pat)));
    expect(missing.map(({ doc, route }) => `${doc}: ${route}`)).toEqual([]);
  });

  it('docs/README.md lists every page of docs/', () => {
    const index = readFileSync('docs/README.md', 'utf8');
    const pages = readdirSync('docs').filter((f) => f.endsWith('.md') && f !== 'README.md');
    expect(pages.filter((f) => !index.includes(`(${f})`))).toEqual([]);
  });

  it('docs/decisions records each have a title, Context, Decision and Consequence, and an index row', () => {
    const dir = 'docs/decisions';
    const records = readdirSync(dir).filter((f) => /^\d{4}-[a-z0-9-]+\.md$/.test(f));
    expect(records.length).toBeGreaterThan(5);
    const index = readFileSync(join(dir, 'README.md'), 'utf8');
    const bad = records.filter((f) => {
      const text = readFileSync(join(dir, f), 'utf8');
      const lines = text.trimEnd().split('\n').length;
      return !/^# \S/.test(text) || !/^## Context$/m.test(text) || !/^## Decision$/m.test(text)
        || !/^## Consequence$/m.test(text) || lines < 10 || lines > 30 || !index.includes(`(${f})`);
    });
    expect(bad).toEqual([]);
    // Every record a source comment points to exists.
    const pointed = srcFiles.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/docs\/decisions\/(\d{4})/g)].map((m) => `${relative('.', f)} -> ${m[1]}`));
    expect(pointed.filter((p) => !records.some((r) => r.startsWith(p.slice(-4))))).toEqual([]);
  });
});
