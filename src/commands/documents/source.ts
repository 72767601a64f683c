import { content, fail } from '../../domain/result.js';
import { findAnchor } from '../../sfmd/anchors.js';
import { warningLine } from '../../sfmd/parse.js';
import type { Command } from '../types.js';
import { buildDocData, fetchSource, isResult } from './load.js';
import { noDocument } from './open.js';
import { docData, type DocData } from './state.js';
import { resolveTarget } from './targets.js';
import { anchorText } from './view.js';

/** The /source output for loaded data: raw text, then the warnings after a rule (behaviour.md §2.3). */
function sourceOutput(data: DocData, anchor: string | null): string[] {
  const name = data.loaded.display + (anchor ? `#${anchor}` : '');
  const system = data.html ? `Source of ${name} (HTML; /open shows it converted)` : `Source of ${name}`;
  let raw = data.raw;
  if (anchor) {
    const at = findAnchor(data.loaded.doc, anchor) as { startLine: number; endLine: number };
    raw = data.loaded.doc.source.replace(/\r\n?/g, '\n').split('\n').slice(at.startLine - 1, at.endLine).join('\n');
  }
  // Trailing line ends would add blank lines before the warnings section (behaviour.md §1.5 drops them at the end anyway).
  const lines = [system, '---', raw.replace(/(\r?\n)+$/, '')];
  if (data.warnings.length && !anchor) lines.push('', '---', '', ...data.warnings.map(warningLine));
  return lines;
}

/** `/source [<target>]` (behaviour.md §2.3): the raw document, templates included. */
export const sourceCommand: Command = {
  name: 'source',
  async run(ctx) {
    const arg = ctx.args.trim();
    const cur = docData(ctx.session);
    if (arg === '') {
      if (!cur || ctx.session.ref.type === 'hub') return noDocument();
      return content(sourceOutput(cur, null)[0], sourceOutput(cur, null).slice(2));
    }
    const r = resolveTarget(ctx, arg);
    if (r.type === 'error') return r.result;
    if (r.type === 'folder') return fail('INVALID_PATH', `Is a directory: ${r.display}`);
    let data: DocData;
    let anchor: string | null;
    if (r.type === 'anchor') {
      if (!cur) return noDocument();
      data = cur;
      anchor = r.anchor;
    } else {
      const f = await fetchSource(ctx, r.source);
      if (isResult(f)) return f;
      data = await buildDocData(ctx, f, r.source);
      anchor = r.anchor;
    }
    if (anchor !== null) {
      const a = anchorText(data, anchor);
      if ('ok' in a) return a;
    }
    const out = sourceOutput(data, anchor);
    return content(out[0], out.slice(2));
  },
};
