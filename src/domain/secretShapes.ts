import { applySpans, decodedSpans, type Span } from './percentView.js';

/**
 * Secrets recognised by their shape alone (behaviour.md §13.4, §14.2): what Loom itself hands out
 * (capability secrets, webhook tokens and the webhook URL that carries one) and credentials an agent
 * commonly types or opens (an `Authorization` header, GitHub tokens, the user-info of a URL, a
 * token-like query parameter). Each shape names the part that is the secret and the text shown in
 * its place; what comes before it stays, so a reader still sees what kind of secret was there.
 *
 * No shape needs a word boundary before it: a secret glued to what precedes it (`%20caps_…`,
 * `xghp_…`) is still that secret.
 */

/** One secret shape: a cheap test that the text may hold one, the pattern, and the secret's mask. */
export interface SecretShape {
  readonly name: string;
  /** False when the text cannot hold the shape (a plain test, so most texts cost nothing more). */
  readonly mayHold: (text: string) => boolean;
  /**
   * Global pattern whose named group `s` is the secret and ends the match (what must follow it is a
   * lookahead), so its place is known without the slower `d` flag; never run on a text `mayHold` refused.
   */
  readonly pattern: RegExp;
  /** What replaces group `s`. */
  readonly mask: string;
}

/**
 * Token bodies: base64url runs. Loom's own secrets are 43 characters; shorter runs from 16 on are
 * masked too, since a secret cut or mistyped is still most of a secret.
 */
const B64 = '[A-Za-z0-9_-]';
const NOT_B64_AFTER = '(?![A-Za-z0-9_-])';
/** Query parameters whose value is a credential: these names, and any name ending `_`/`-` one of them. */
const QUERY_NAMES = '(?:[A-Za-z0-9.]*[_-])?(?:access_token|token|key|secret|password)';

/** The shapes. Where two overlap (a token inside a query value), the earlier-starting one's mask is shown. */
export const SECRET_SHAPES: readonly SecretShape[] = [
  {
    name: 'capability secret',
    mayHold: (t) => t.includes('caps_'),
    pattern: new RegExp(`caps_(?<s>${B64}{16,})${NOT_B64_AFTER}`, 'g'),
    mask: '<secret>',
  },
  {
    name: 'webhook token',
    mayHold: (t) => t.includes('wh_'),
    pattern: new RegExp(`wh_(?<s>${B64}{16,})${NOT_B64_AFTER}`, 'g'),
    mask: '<token>',
  },
  {
    // Whatever follows /webhook/ is the credential of that URL, well-formed or not (a webhook token
    // there is left to its own shape, so it reads `wh_<token>`).
    name: 'webhook URL',
    mayHold: (t) => t.includes('/webhook/'),
    pattern: new RegExp(`/webhook/(?<s>(?!wh_<token>|<token>|wh_${B64}{16,}${NOT_B64_AFTER})[^\\s/?#"'\`<>\\\\]+)`, 'g'),
    mask: '<token>',
  },
  {
    // `+` separates words too: a header typed into a form-encoded query (`Authorization:+Bearer+…`).
    name: 'authorization header',
    mayHold: (t) => /authori[sz]ation/i.test(t),
    pattern: /authori[sz]ation[\s+]*:[\s+]*(?:bearer|basic|token)[\s+]+(?<s>(?!<secret>)[^\s+"'`<>\\]+)/gi,
    mask: '<secret>',
  },
  {
    // ghp_ (classic), gho_ (OAuth), ghu_/ghs_ (app user/server), ghr_ (refresh).
    name: 'GitHub token',
    mayHold: (t) => t.includes('gh'),
    pattern: /gh[pousr]_(?<s>[A-Za-z0-9]{16,})(?![A-Za-z0-9_])/g,
    mask: '<secret>',
  },
  {
    name: 'GitHub fine-grained token',
    mayHold: (t) => t.includes('github_pat_'),
    pattern: /github_pat_(?<s>[A-Za-z0-9_]{16,})/g,
    mask: '<secret>',
  },
  {
    // `scheme://user:password@host`: the whole user-info, since a token often stands alone there
    // (matched from `://`: a scheme adds nothing, and scanning for one at every letter is slow).
    name: 'URL user-info',
    mayHold: (t) => t.includes('@') && t.includes('://'),
    pattern: /:\/\/(?<s>[^\s/?#@"'`<>\\]+)(?=@)/g,
    mask: '<secret>',
  },
  {
    name: 'credential query value',
    mayHold: (t) => t.includes('='),
    pattern: new RegExp(`[?&;]${QUERY_NAMES}=(?<s>[^&#\\s"'\`<>\\\\]+)`, 'gi'),
    mask: '<secret>',
  },
];

/** Any shape's start (or an escape that may hide one): one scan tells most texts apart at once. */
const ANY_SHAPE = /caps_|wh_|\/webhook\/|authori[sz]ation|gh[pousr]_|github_pat_|:\/\/[^\s/?#@]*@|(?:token|key|secret|password)=|%[0-9A-Fa-f]{2}/i;

/** How many levels of percent-encoding are read through (`%2520` is `%20` encoded once more). */
const DECODE_DEPTH = 3;

/** Where the shapes' secrets lie in `text`, each with its mask. */
export function shapeSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const s of SECRET_SHAPES) {
    if (!s.mayHold(text)) continue;
    s.pattern.lastIndex = 0;
    for (let m = s.pattern.exec(text); m; m = s.pattern.exec(text)) {
      const end = m.index + m[0].length;
      spans.push([end - (m.groups as { s: string }).s.length, end, s.mask]);
    }
  }
  return spans;
}

/**
 * `text` with every secret of a known shape replaced by its mask (the text itself when none),
 * as written and as it reads once percent-decoded: an encoded secret's characters are replaced
 * where they stand, the encoding of the rest is kept.
 */
export function maskShapes(text: string): string {
  if (!ANY_SHAPE.test(text)) return text;
  return applySpans(text, [...shapeSpans(text), ...decodedSpans(text, shapeSpans, DECODE_DEPTH)]);
}
