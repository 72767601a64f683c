import { scopeLabel } from '../../domain/ports.js';
import { fail, joinLines, nextLine, type CommandResult } from '../../domain/result.js';
import { ownValue } from '../../domain/keys.js';
import { topicScope } from '../../domain/topic.js';
import { findAnchor, anchorIds } from '../../sfmd/anchors.js';
import { warningLine } from '../../sfmd/parse.js';
import { renderRange } from '../../sfmd/render.js';
import type { ActionDef } from '../../sfmd/types.js';
import type { CommandContext } from '../types.js';
import type { DocData } from './state.js';

/**
 * behaviour.md §3.9 ENV_REQUIRED check: every `requires:` name and every required `env:` entry
 * without a default must resolve to a non-empty value from the topic's env-store cascade (remote
 * documents: without the global scope) or, for local documents, the process environment.
 */
export function envCheck(ctx: CommandContext, data: DocData): CommandResult | null {
  const { doc, origin } = data.loaded;
  const local = origin === 'local';
  const scope = topicScope(ctx.session.ref);
  const needed = [...doc.requires, ...doc.env.filter((e) => e.required && e.default === undefined).map((e) => e.name)];
  const missing = [...new Set(needed)].filter((name) => {
    const v = ctx.services.env.lookup(ctx.agent.id, scope, name, { includeGlobal: local })?.value;
    if (v !== undefined && v !== '') return false;
    return !(local && (ownValue(process.env, name) ?? '') !== '');
  });
  if (missing.length === 0) return null;
  const details = missing.map((n) => {
    const d = doc.env.find((e) => e.name === n)?.description;
    return d ? `  $${n} — ${d}` : `  $${n}`;
  });
  let recovery = `/set $${missing[0]} = "..." here (writes to ${scopeLabel(scope)}), then /open again`;
  if (data.loaded.requirements) recovery += ` · setup: /open ${data.loaded.requirements}`;
  return fail('ENV_REQUIRED', `Missing required variables for ${data.loaded.display}: ${missing.map((n) => `$${n}`).join(', ')}`, { details, recovery });
}

/** `next:` item of an action: `/act.<id>` when it needs nothing, else `/act.<id> --help` (behaviour.md §3.4). */
export function actionHint(a: ActionDef): string {
  return a.fields.some((f) => f.required && f.default === undefined) ? `/act.${a.id} --help` : `/act.${a.id}`;
}

/** The hint lines after a whole-document rendering (behaviour.md §3.4). */
export function hintLines(data: DocData): string[] {
  const out = data.menus.map((m) => `[nav] ${m.name} (${m.entries.length}) — /nav ${m.name}`);
  const acts = data.loaded.doc.actions;
  if (acts.length) out.push(`[actions] ${acts.map((a) => a.id).join(', ')}`);
  out.push(...data.warnings.map(warningLine));
  if (acts.length) out.push(nextLine(acts.slice(0, 5).map(actionHint)));
  return out;
}

/** The system line's target: `<display>`, packages `<display> (<path display or URL>)`. */
export function openedName(data: DocData, anchor: string | null): string {
  const name = data.loaded.display + (anchor ? `#${anchor}` : '');
  return data.pathDisplay ? `${name} (${data.pathDisplay})` : name;
}

/** The rendered text of an anchor, or the NOT_FOUND failure of behaviour.md §3.5. */
export function anchorText(data: DocData, anchor: string): { text: string } | CommandResult {
  const doc = data.loaded.doc;
  const at = findAnchor(doc, anchor);
  if (!at) {
    const ids = anchorIds(doc);
    const detail = ids.length ? `Anchors: ${ids.slice(0, 30).map((i) => `#${i}`).join(', ')}` : 'This document has no anchors.';
    return fail('NOT_FOUND', `Anchor not found: #${anchor} in ${data.loaded.display}`, { details: [detail] });
  }
  return { text: renderRange(doc.renderLines ?? doc.rendered.split('\n'), at.startLine, at.endLine) };
}

/** The whole-document output of /open, /refresh, /back (behaviour.md §3.4) without the default action. */
export function documentOutput(system: string, data: DocData): string[] {
  const lines = [system, '---'];
  const body = data.loaded.doc.rendered;
  if (body !== '') lines.push(body);
  if (data.installHint) lines.push('', '---', '', data.installHint.replace(/\s+$/, ''));
  const hints = hintLines(data);
  if (hints.length) lines.push('', ...hints);
  return lines;
}

/**
 * Run the default action after a whole-document load when the document declares one and the
 * actions feature is present (behaviour.md §4.13); the open succeeds whatever the action does.
 */
export async function withDefault(ctx: CommandContext, data: DocData, lines: string[]): Promise<CommandResult> {
  const actions = ctx.services.actions;
  if (data.loaded.doc.defaultAction !== undefined && actions) {
    const r = await actions.runDefault(ctx, data.loaded);
    lines.push('', '---', '', r.body);
  }
  return { ok: true, code: null, body: joinLines(lines) };
}
