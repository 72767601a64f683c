/**
 * The action-document model (spec §4.11; behaviour.md §3, §4). Produced by the parser (`parse.ts`),
 * consumed by rendering, invocation and execution. Pure data: no functions, no I/O.
 */

/** behaviour.md §4.4 parameter types. */
export type FieldType = 'string' | 'number' | 'boolean' | 'path' | 'tuple';

/** One declared parameter line (behaviour.md §4.4). */
export interface FieldDef {
  name: string;
  /** One-letter alias without the dash, e.g. `q` for `-q`. */
  alias?: string;
  type: FieldType;
  required: boolean;
  description?: string;
  /** Default text as written (substituted when used, behaviour.md §4.6). */
  default?: string;
  /** Enumeration of allowed values (a constraint containing `|`). */
  allowed?: string[];
  /** `min:N` / `max:N` (value for numbers, length in characters otherwise). */
  min?: number;
  max?: number;
  /** Other constraints, kept as hints for `--help`. */
  hints: string[];
  /** 1-based line of the declaration in the whole file. */
  line: number;
}

/** HTTP methods of spec §4.11. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One declared header `-H "Name: value"` (behaviour.md §4.2). */
export interface HeaderDef {
  name: string;
  value: string;
}

/** A response template block `act.<id>.response` (spec §4.11), kept as raw lines. */
export interface ResponseTemplate {
  lines: string[];
  /** 1-based line of the first template line in the whole file. */
  line: number;
}

/** One action (spec §4.11; behaviour.md §4.1–4.5). */
export interface ActionDef {
  id: string;
  kind: 'http' | 'cli';
  /** For HTTP actions. */
  method?: HttpMethod;
  /** URL template (HTTP) — placeholders intact. */
  url?: string;
  /** Command template (CLI), continuation lines joined with `\n`. */
  command?: string;
  headers: HeaderDef[];
  /** Body template (`body:` or inline `-d`), common indentation removed; undefined when none. */
  body?: string;
  fields: FieldDef[];
  response?: ResponseTemplate;
  /** 1-based line of the opening fence. */
  line: number;
}

/** A document warning (behaviour.md §3.10): `line` is null for warnings without a line prefix. */
export interface DocWarning {
  line: number | null;
  text: string;
}

/** One `env:` declaration (spec §4.12.3; behaviour.md §3.9). */
export interface EnvDecl {
  name: string;
  description?: string;
  default?: string;
  required: boolean;
}

/** A heading of the document (for anchors, behaviour.md §3.5). */
export interface HeadingInfo {
  depth: number;
  text: string;
  /** Explicit `{#id}` or the slug (with -1, -2 … de-duplication). */
  id: string;
  /** 1-based first and last line of the heading block. */
  startLine: number;
  endLine: number;
  /** True when the id came from a trailing `{#id}` (it wins over slugs, behaviour.md §3.5). */
  explicit?: boolean;
}

/** A block-marker anchor `<!-- #id -->` … `<!-- /id -->` (behaviour.md §3.5). */
export interface BlockAnchor {
  id: string;
  startLine: number;
  endLine: number;
}

/** A directive line `[!name…](path)` (behaviour.md §3.8). */
export interface Directive {
  name: string;
  /** For `nav:`/`menu:` directives: the menu name. */
  arg?: string;
  path: string;
  line: number;
}

/** A page shortcut `[@id Label](href)` or `[@id]: href` (behaviour.md §3.7). */
export interface PageShortcut {
  id: string;
  label?: string;
  href: string;
  line: number;
}

/** The parsed document (the parser is a pure function `parseDocument(text) -> ActionDoc`). */
export interface ActionDoc {
  /** Frontmatter as parsed YAML (empty object when none or invalid). */
  frontmatter: Record<string, unknown>;
  title: string | null;
  /** Frontmatter `default:` action id, if any. */
  defaultAction?: string;
  env: EnvDecl[];
  /** `requires:` names without `$`. */
  requires: string[];
  actions: ActionDef[];
  headings: HeadingInfo[];
  blocks: BlockAnchor[];
  directives: Directive[];
  shortcuts: PageShortcut[];
  warnings: DocWarning[];
  /** The Markdown as rendered by behaviour.md §3.4 (frontmatter, act fences, directives and markers removed). */
  rendered: string;
  /** The raw text as given. */
  source: string;
  /**
   * Per source line (index = line - 1): the line as rendered, or null when rendering removes it
   * (frontmatter, act fences, directives, block markers). Anchor opens render a slice of it.
   */
  renderLines?: Array<string | null>;
}
