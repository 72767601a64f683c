import { createTwoFilesPatch } from 'diff';
import type { Expect, ExpectHead } from '../domain/trace.js';
import { normalise } from '../domain/traceText.js';

const HEAD_FIELDS: Array<keyof ExpectHead> = ['ok', 'code', 'topic', 'topic_type', 'meta'];

/** JSON with object keys sorted, so a hand-written `meta` compares whatever order it lists its keys in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/**
 * The compared parts of an answer as text, one field per line, content last (behaviour.md §14.3:
 * HTTP status, head ok, code, topic, topic_type, meta, and the content). Only the fields the
 * expectation names are shown, so a hand-written `expect` compares what it says and nothing else.
 */
function render(e: Expect, fields: Expect): string {
  const lines: string[] = [];
  if (fields.status !== undefined) lines.push(`status: ${e.status ?? '(none)'}`);
  for (const k of HEAD_FIELDS) {
    if (fields.head && k in fields.head) lines.push(`${k}: ${e.head && k in e.head ? canonical(e.head[k]) : '(none)'}`);
  }
  if (fields.error !== undefined) lines.push(`error: ${e.error !== undefined ? canonical(e.error) : '(none)'}`);
  if (fields.content !== undefined) lines.push('content:', ...(e.content === undefined ? ['(none)'] : e.content.split('\n')));
  return `${lines.join('\n')}\n`;
}

/**
 * Compare one step's answer with its expectation after normalising both (behaviour.md §14.3).
 * Returns null when they match, else a unified diff of expected vs actual naming the step.
 */
export function compareAnswer(seq: number, expected: Expect, actual: Expect, tmpRoots: readonly string[]): string | null {
  const a = normalise(render(expected, expected), tmpRoots);
  const b = normalise(render(actual, expected), tmpRoots);
  if (a === b) return null;
  const patch = createTwoFilesPatch(`expected (step ${seq})`, `actual (step ${seq})`, a, b, '', '', { context: 3 });
  // jsdiff starts with a line of `=`; the unified diff proper begins at `---`.
  return patch.slice(patch.indexOf('---')).replace(/\t$/gm, '').trimEnd();
}
