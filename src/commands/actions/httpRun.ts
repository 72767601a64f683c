import { nullRecord } from '../../domain/keys.js';
import { fail, type CommandResult } from '../../domain/result.js';
import { readModifierFile } from '../../effects/actionFiles.js';
import { htmlToMarkdown } from '../../effects/html.js';
import { sendHttpAction } from '../../effects/httpAction.js';
import type { BoundField } from '../../sfmd/bind.js';
import { substituteBody } from '../../sfmd/bodyTemplate.js';
import { valueText } from '../../sfmd/fieldValues.js';
import { tryParseJson } from '../../sfmd/jsonPath.js';
import { DollarWarnings, substituteHeader, substituteUrl, type DefinitionNames } from '../../sfmd/substitute.js';
import type { ActionDef } from '../../sfmd/types.js';
import type { LoadedDocument } from '../docContract.js';
import type { CommandContext } from '../types.js';
import { cutBytes, failure, fieldSlots, finish } from './results.js';
import { definitionDollar, isLocal } from './variables.js';
import { plural } from '../../domain/text.js';

/** HTTP action limits (behaviour.md §1.8), injectable for tests. */
export interface HttpLimits {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
}

/** behaviour.md §1.8 defaults: 30 s, 10 MiB, 5 redirects. */
export const HTTP_LIMITS: HttpLimits = { timeoutMs: 30000, maxBytes: 10 * 1024 * 1024, maxRedirects: 5 };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** `<url without query>` of messages. */
export function urlWithoutQuery(url: string): string {
  return url.replace(/[?#].*$/s, '');
}

/** A field goes into the query string / flat body: it has a value, and not an empty one taken from its default (§4.7 step 5). */
function sendable(b: BoundField): boolean {
  return b.value !== undefined && !(b.fromDefault && valueText(b.value) === '');
}

/** Set query parameters, replacing same-named ones and keeping the rest of the query byte for byte. */
function setQuery(u: URL, params: Array<[string, string]>): void {
  if (params.length === 0) return;
  const names = new Set(params.map(([k]) => k));
  const keyOf = (pair: string) => {
    const raw = pair.split('=')[0].replace(/\+/g, ' ');
    try { return decodeURIComponent(raw); } catch { return raw; /* malformed escape: compare as written */ }
  };
  const kept = u.search.replace(/^\?/, '').split('&').filter((p) => p !== '' && !names.has(keyOf(p)));
  u.search = [...kept, ...params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)].join('&');
}

/** Flat JSON body of behaviour.md §4.7 step 4. */
function flatBody(fields: Map<string, BoundField>, consumed: Set<string>): string {
  // Field names are user text: `__proto__` must become a key of the body, not its prototype.
  const obj = nullRecord<unknown>();
  for (const [name, b] of fields) {
    if (consumed.has(name) || !sendable(b)) continue;
    const v = b.value as string | string[];
    if (b.def.type === 'tuple') obj[name] = Array.isArray(v) ? v : [v];
    else if (b.def.type === 'number' && Number.isFinite(Number(v))) obj[name] = Number(v);
    else if (b.def.type === 'boolean') obj[name] = v === 'true';
    else obj[name] = valueText(v);
  }
  return JSON.stringify(obj);
}

/** Text types of behaviour.md §4.9 (anything else with a Content-Type is binary). */
function isTextType(ct: string): boolean {
  return ct === '' || /^text\/|json|xml|javascript|x-www-form-urlencoded|yaml|csv|graphql/i.test(ct);
}

/** A request ready to send, or the failure that stopped building it. */
type Built = { ok: true; url: URL; headers: Array<[string, string]>; body?: string; warnings: DollarWarnings } | { ok: false; result: CommandResult };

/** behaviour.md §4.7 steps 1, 3–6: URL, query or body, headers. */
function buildRequest(ctx: CommandContext, loaded: LoadedDocument, a: ActionDef, fields: Map<string, BoundField>, limits: HttpLimits): Built {
  const names: DefinitionNames = { fields: fieldSlots(fields), vars: ctx.session.vars, dollar: definitionDollar(ctx, loaded) };
  // URL and headers: an unset $NAME stops the action before anything is sent (behaviour.md §4.6:
  // a literal `$TOKEN` credential only confuses the server); the body only warns.
  const strict = new DollarWarnings();
  const dw = new DollarWarnings();
  const sub = substituteUrl(a.url ?? '', names, strict);
  const values = a.headers.map((h) => [h.name, substituteHeader(h.value, names, strict)] as [string, string]);
  const unset = strict.unresolved()[0];
  if (unset !== undefined) return { ok: false, result: fail('ENV_REQUIRED', `$${unset} is not set; set it with /set $${unset} = "..."`) };
  let url: URL;
  try {
    url = new URL(sub.url);
  } catch {
    url = new URL('invalid:'); // not a URL at all: reported below like any other scheme
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, result: fail('INVALID_TARGET', `Action URL is not an absolute http(s) URL: ${sub.url}`) };
  const headers: Array<[string, string]> = [];
  for (const [name, value] of values) {
    if (/[\r\n\0]/.test(value)) return { ok: false, result: fail('INVALID_ARGS', `Header ${name} would contain a line break or NUL`, { recovery: `/act.${a.id} --help` }) };
    headers.push([name, value]);
  }
  let body: string | undefined;
  if (a.method === 'GET' || a.method === 'DELETE' || a.method === undefined) {
    setQuery(url, [...fields].filter(([n, b]) => !sub.consumed.has(n) && sendable(b)).map(([n, b]) => [n, valueText(b.value)]));
  } else if (a.body !== undefined) {
    const r = substituteBody(a.body, names, dw, (p) => readModifierFile(ctx.agent, p, limits.maxBytes));
    if (!r.ok) return { ok: false, result: fail(r.failure.code, r.failure.message, r.failure.code === 'INVALID_ARGS' ? { recovery: `/act.${a.id} --help` } : {}) };
    body = r.body;
  } else {
    body = flatBody(fields, sub.consumed);
  }
  if (body !== undefined && !headers.some(([n]) => n.toLowerCase() === 'content-type')) {
    headers.push(['Content-Type', tryParseJson(body) !== undefined ? 'application/json' : 'text/plain; charset=utf-8']);
  }
  return { ok: true, url, headers, ...(body !== undefined ? { body } : {}), warnings: dw };
}

/** behaviour.md §4.7 step 2: a remote document may not reach the daemon itself (checked on every hop). */
function daemonGuard(ctx: CommandContext, loaded: LoadedDocument): (u: URL) => string | null {
  const port = ctx.services.info.port();
  return (u) => {
    if (isLocal(loaded)) return null;
    const p = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    return LOOPBACK.has(u.hostname) && p === port ? 'Remote documents may not call the Loom daemon' : null;
  };
}

/**
 * Build and send an HTTP action (behaviour.md §4.7), then map the outcome (§4.9).
 */
export async function runHttpAction(ctx: CommandContext, loaded: LoadedDocument, a: ActionDef, fields: Map<string, BoundField>, warningsIn: string[], limits: HttpLimits): Promise<CommandResult> {
  const method = a.method ?? 'GET';
  const b = buildRequest(ctx, loaded, a, fields, limits);
  if (!b.ok) return b.result;
  const shown = `${method} ${urlWithoutQuery(b.url.href)}`;
  const out = await sendHttpAction({
    method, url: b.url.href, headers: b.headers, timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes, maxRedirects: limits.maxRedirects, signal: ctx.signal,
    ...(b.body !== undefined ? { body: Buffer.from(b.body, 'utf8') } : {}),
    checkHop: daemonGuard(ctx, loaded),
  });
  switch (out.kind) {
    case 'refused': return fail('FORBIDDEN', out.message);
    case 'aborted': return fail('CONFLICT', `Topic ${ctx.session.ref.topic} was closed while this command ran`);
    case 'timeout': return failure(loaded, 'TIMEOUT', `/act.${a.id} timed out after ${Math.round(limits.timeoutMs / 1000)} s`);
    case 'tooLarge': return failure(loaded, 'HTTP_ERROR', `Response from ${shown} exceeds 10 MiB`);
    case 'network': return failure(loaded, 'HTTP_ERROR', `Network error: ${shown}: ${out.reason}`);
    default: break;
  }
  const ct = String(out.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const binary = !isTextType(ct);
  const text = binary ? `(binary ${plural(out.body.length, 'byte')}, ${ct})` : out.body.toString('utf8');
  const ok = out.status >= 200 && out.status < 300;
  let plain: string;
  if (ok) plain = text === '' ? `(empty response, HTTP ${out.status})` : ct === 'text/html' ? await htmlToMarkdown(text) : text;
  else { const c = cutBytes(text, 2048); plain = c.cut ? `${c.text}…` : text; }
  return finish({
    ctx, loaded, action: a, fields, plain, warnings: [...warningsIn, ...b.warnings.lines()],
    response: { kind: 'http', status: out.status, body: text, json: binary ? undefined : tryParseJson(text) },
    failure: ok ? null : { code: 'HTTP_ERROR', message: `HTTP ${out.status} from ${shown}` },
  });
}
