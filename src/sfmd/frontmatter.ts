import { createRequire } from 'node:module';
import type matterFn from 'gray-matter';
import { VAR_NAME_RE } from '../domain/ids.js';
import type { DocWarning, EnvDecl } from './types.js';

/** The frontmatter part of a document (behaviour.md §3.9). */
export interface Frontmatter {
  /** Lines used by the frontmatter block including both delimiters (0 when there is none). */
  lines: number;
  data: Record<string, unknown>;
  title?: string;
  defaultAction?: string;
  env: EnvDecl[];
  requires: string[];
  warnings: DocWarning[];
}

interface YamlError {
  reason?: string;
  mark?: { line: number; column: number };
  message?: string;
}

/** Find the frontmatter block: line 1 is `---`, closed by the next line `---` or `...`. */
function findBlock(lines: string[]): number {
  if (lines.length === 0 || lines[0].trimEnd() !== '---') return 0;
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i].trimEnd();
    if (l === '---' || l === '...') return i + 1;
  }
  return 0;
}

/** A YAML scalar as text (behaviour.md §3.9: `title` is stringified). */
export function scalarText(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString().replace(/T00:00:00\.000Z$/, '');
  return JSON.stringify(v);
}

const DELIM = '<<<loom-frontmatter>>>';

let matterLoaded: typeof matterFn | undefined;

/**
 * gray-matter (with js-yaml and esprima, several MiB of heap) is loaded on the first document that has
 * frontmatter, synchronously so the parser stays a plain function: a daemon whose documents have
 * none never carries it (docs/architecture.md, "Resident memory").
 */
function matter(): typeof matterFn {
  matterLoaded ??= createRequire(import.meta.url)('gray-matter') as typeof matterFn;
  return matterLoaded;
}

const stripDollar = (s: string) => s.trim().replace(/^\$/, '');

/** `requires:` as a list, a flow list or a string `"A, B"` / `"A B"` (behaviour.md §3.9). */
function parseRequires(v: unknown, warnings: DocWarning[]): string[] {
  if (v === undefined || v === null) return [];
  const items = Array.isArray(v) ? v.map((x) => scalarText(x) ?? '') : (scalarText(v) ?? '').split(/[\s,]+/).filter((x) => x !== '');
  const out: string[] = [];
  for (const raw of items) {
    const name = stripDollar(raw);
    if (!VAR_NAME_RE.test(name)) warnings.push({ line: null, text: `requires: "${raw}" is not a valid variable name; ignored` });
    else if (!out.includes(name)) out.push(name);
  }
  return out;
}

const META_KEYS = ['default', 'required', 'description', 'name'];

/** One `env:` entry in any of the forms of behaviour.md §3.9, or null when it names nothing. */
function envEntry(item: unknown, mapName?: string): { name: string; decl: Omit<EnvDecl, 'name'> } | null {
  const decl: Omit<EnvDecl, 'name'> = { required: true };
  if (mapName !== undefined) {
    // Map form: `NAME: "description"` or `NAME: {description, default, required}`.
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) applyMeta(decl, item as Record<string, unknown>);
    else if (item !== null && item !== undefined) decl.description = scalarText(item);
    return { name: mapName, decl };
  }
  if (typeof item === 'string') return { name: item, decl };
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return null;
  const obj = item as Record<string, unknown>;
  if (typeof obj.name === 'string') {
    applyMeta(decl, obj);
    return { name: obj.name, decl };
  }
  // List of single-key maps (spec form): `- CITY: "desc"` with sibling `default:` / `required:`.
  const key = Object.keys(obj).find((k) => !META_KEYS.includes(k));
  if (key === undefined) return null;
  const v = obj[key];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) applyMeta(decl, v as Record<string, unknown>);
  else if (v !== null && v !== undefined) decl.description = scalarText(v);
  applyMeta(decl, obj);
  return { name: key, decl };
}

function applyMeta(decl: Omit<EnvDecl, 'name'>, obj: Record<string, unknown>): void {
  if (obj.description !== undefined && obj.description !== null) decl.description = scalarText(obj.description);
  if (obj.default !== undefined && obj.default !== null) decl.default = scalarText(obj.default);
  if (obj.required === false || obj.required === 'false') decl.required = false;
}

/** `env:` in list or map form (spec §4.12.3; behaviour.md §3.9). */
function parseEnv(v: unknown, warnings: DocWarning[]): EnvDecl[] {
  if (v === undefined || v === null) return [];
  const entries: Array<ReturnType<typeof envEntry>> = [];
  if (Array.isArray(v)) entries.push(...v.map((x) => envEntry(x)));
  else if (typeof v === 'object') entries.push(...Object.entries(v as Record<string, unknown>).map(([k, x]) => envEntry(x, k)));
  else entries.push(...(scalarText(v) ?? '').split(/[\s,]+/).filter((x) => x).map((x) => envEntry(x)));
  const out: EnvDecl[] = [];
  for (const e of entries) {
    if (!e) {
      warnings.push({ line: null, text: 'env: an entry names no variable; ignored' });
      continue;
    }
    const name = stripDollar(e.name);
    if (!VAR_NAME_RE.test(name)) {
      warnings.push({ line: null, text: `env: "${e.name}" is not a valid variable name; ignored` });
      continue;
    }
    if (out.some((d) => d.name === name)) continue;
    out.push({ name, ...e.decl });
  }
  return out;
}

/**
 * Parse the frontmatter of `lines` (the document split at `\n`). Invalid YAML: no frontmatter
 * and the warning of behaviour.md §3.9; the block's lines still count for line numbers.
 */
export function parseFrontmatter(lines: string[]): Frontmatter {
  const fm: Frontmatter = { lines: findBlock(lines), data: {}, env: [], requires: [], warnings: [] };
  if (fm.lines === 0) return fm;
  const yaml = lines.slice(1, fm.lines - 1).join('\n');
  let data: unknown;
  try {
    // Private delimiters so a YAML line starting with `---` cannot end the block early; passing
    // options also stops gray-matter from caching results by content.
    data = matter()(`${DELIM}\n${yaml}\n${DELIM}\n`, { delimiters: [DELIM, DELIM] }).data;
  } catch (err) {
    const e = err as YamlError;
    const where = e.mark ? ` at line ${e.mark.line + 1}` : '';
    fm.warnings.push({ line: null, text: `frontmatter is not valid YAML (${e.reason ?? e.message ?? String(err)}${where}); ignored` });
    return fm;
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    fm.warnings.push({ line: null, text: 'frontmatter is not valid YAML (expected key: value pairs); ignored' });
    return fm;
  }
  fm.data = data as Record<string, unknown>;
  fm.title = scalarText(fm.data.title);
  const def = scalarText(fm.data.default);
  if (def !== undefined && def.trim() !== '') fm.defaultAction = def.trim();
  fm.env = parseEnv(fm.data.env, fm.warnings);
  fm.requires = parseRequires(fm.data.requires, fm.warnings);
  return fm;
}
