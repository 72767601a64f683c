import { fail, type CommandCode, type CommandResult } from '../../domain/result.js';
import type { BoundField } from '../../sfmd/bind.js';
import type { FieldSlot } from '../../sfmd/substitute.js';
import { assembleOutput, renderTemplate, type TemplateResponse } from '../../sfmd/template.js';
import type { ActionDef } from '../../sfmd/types.js';
import type { ShortcutValue } from '../../domain/session.js';
import { writeActionFile } from '../../effects/actionFiles.js';
import type { LoadedDocument } from '../docContract.js';
import type { CommandContext } from '../types.js';
import { isLocal } from './variables.js';

/**
 * Turning an action's response into the command result (behaviour.md §4.9 outcome table), with the
 * response template when the action has one.
 */

/** behaviour.md §1.8: action output shown. */
export const ACTION_OUTPUT_BYTES = 262144;
/** Payload fields as substitution sees them. */
export function fieldSlots(fields: Map<string, BoundField>): Map<string, FieldSlot> {
  return new Map([...fields].map(([k, b]) => [k, { type: b.def.type, value: b.value }]));
}

/** Cut text to `max` UTF-8 bytes at a character boundary. */
export function cutBytes(text: string, max: number): { text: string; cut: boolean } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= max) return { text, cut: false };
  let end = max;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString('utf8'), cut: true };
}

/** behaviour.md §4.9: output over the cap is cut with a warning line. */
function capOutput(body: string): string {
  const c = cutBytes(body, ACTION_OUTPUT_BYTES);
  return c.cut ? `${c.text}\nwarning: output truncated to ${ACTION_OUTPUT_BYTES} bytes` : body;
}

/** What a run hands to `finish`. */
export interface Finished {
  ctx: CommandContext;
  loaded: LoadedDocument;
  action: ActionDef;
  fields: Map<string, BoundField>;
  response: TemplateResponse;
  /** Failure first line (code and message) for non-2xx / non-zero exits; null on success. */
  failure: { code: CommandCode; message: string } | null;
  /** The text shown when there is no template. */
  plain: string;
  /** Warnings of binding and request construction (`$NAME is not set …`). */
  warnings: string[];
}

/** Render the template (if any) or the plain text, then apply the failure line and caps. */
export function finish(f: Finished): CommandResult {
  // spec §4.12 item 5: the session keeps the last action result.
  f.ctx.change({ type: 'session.responded', response: { action: f.action.id, ...f.response } });
  let body: string;
  const warnings = [...new Set(f.warnings)];
  if (f.action.response) {
    // The template works on copies; what it set or registered becomes the session's changes.
    const vars = new Map(f.ctx.session.vars);
    const shortcuts = new Map(f.ctx.session.valueShortcuts);
    const t = renderTemplate(f.action.response.lines, f.response, {
      vars,
      fields: fieldSlots(f.fields),
      shortcuts,
      writeTo: (path, bytes) => writeActionFile(f.ctx.agent, isLocal(f.loaded), path, bytes),
      firstLine: f.action.response.line,
    });
    recordTemplateChanges(f.ctx, vars, shortcuts);
    body = assembleOutput(t.output, [...warnings, ...t.warnings], t.next);
  } else {
    body = assembleOutput([f.plain], warnings, []);
  }
  body = capOutput(body);
  if (!f.failure) return { ok: true, code: null, body };
  return failure(f.loaded, f.failure.code, f.failure.message, body === '' ? [] : [body]);
}

/** Turn what a template set or registered into `session.set` / `session.shortcuts` changes. */
function recordTemplateChanges(ctx: CommandContext, vars: ReadonlyMap<string, string>, shortcuts: ReadonlyMap<string, ShortcutValue>): void {
  const before = ctx.session;
  const values = [...vars].filter(([name, value]) => before.vars.get(name) !== value);
  if (values.length > 0) ctx.change({ type: 'session.set', scope: 'session', values });
  const old = [...before.valueShortcuts];
  const same = shortcuts.size === old.length && [...shortcuts].every(([k, v], i) => old[i][0] === k && JSON.stringify(old[i][1]) === JSON.stringify(v));
  if (!same) ctx.change({ type: 'session.shortcuts', valueShortcuts: shortcuts });
}

/** A failure body with the `Setup: /open <path>` line of behaviour.md §4.9 when the document has one. */
export function failure(loaded: LoadedDocument, code: CommandCode, message: string, details: string[] = []): CommandResult {
  const extra = loaded.requirements ? [`Setup: /open ${loaded.requirements}`] : [];
  return fail(code, message, { details: [...details, ...extra] });
}
