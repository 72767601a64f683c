/**
 * Secrets recognised by their shape alone (behaviour.md §13.4, §14.2): what Loom itself hands out
 * (capability secrets, webhook tokens and the webhook URL that carries one) and credentials an agent
 * commonly types into a command (an `Authorization` header, GitHub tokens). Each shape has the text
 * shown in its place; the masks keep the kind visible so a reader still sees what was there.
 */

/** One secret shape: a cheap test that the text may hold one, the pattern, and the replacement. */
export interface SecretShape {
  readonly name: string;
  /** False when the text cannot hold the shape (a plain substring test, so most texts cost nothing more). */
  readonly mayHold: (text: string) => boolean;
  /** Global pattern; never run on a text `mayHold` refused. */
  readonly pattern: RegExp;
  readonly replacement: string;
}

/**
 * Token bodies: base64url runs. Loom's own secrets are 43 characters; shorter runs from 16 on are
 * masked too, since a secret cut or mistyped is still most of a secret.
 */
const B64 = '[A-Za-z0-9_-]';
const NOT_B64_AFTER = '(?![A-Za-z0-9_-])';

/** The shapes, in the order they apply (a webhook token before the URL that holds it). */
export const SECRET_SHAPES: readonly SecretShape[] = [
  {
    name: 'capability secret',
    mayHold: (t) => t.includes('caps_'),
    pattern: new RegExp(`\\bcaps_${B64}{16,}${NOT_B64_AFTER}`, 'g'),
    replacement: 'caps_<secret>',
  },
  {
    name: 'webhook token',
    mayHold: (t) => t.includes('wh_'),
    pattern: new RegExp(`\\bwh_${B64}{16,}${NOT_B64_AFTER}`, 'g'),
    replacement: 'wh_<token>',
  },
  {
    // Whatever follows /webhook/ is the credential of that URL, well-formed or not.
    name: 'webhook URL',
    mayHold: (t) => t.includes('/webhook/'),
    pattern: /\/webhook\/(?!wh_<token>|<token>)[^\s/?#"'`<>\\]+/g,
    replacement: '/webhook/<token>',
  },
  {
    name: 'authorization header',
    mayHold: (t) => /authorization/i.test(t),
    pattern: /\b(authorization\s*:\s*(?:bearer|basic|token)\s+)(?!<secret>)[^\s"'`\\]+/gi,
    replacement: '$1<secret>',
  },
  {
    // ghp_ (classic), gho_ (OAuth), ghu_/ghs_ (app user/server), ghr_ (refresh).
    name: 'GitHub token',
    mayHold: (t) => t.includes('gh'),
    pattern: /\b(gh[pousr]_)[A-Za-z0-9]{16,}(?![A-Za-z0-9_])/g,
    replacement: '$1<secret>',
  },
  {
    name: 'GitHub fine-grained token',
    mayHold: (t) => t.includes('github_pat_'),
    pattern: /\bgithub_pat_[A-Za-z0-9_]{16,}/g,
    replacement: 'github_pat_<secret>',
  },
];

/** Any shape's start: one scan tells most texts (no hint of a secret) apart at once. */
const ANY_SHAPE = /caps_|wh_|\/webhook\/|authorization|gh[pousr]_|github_pat_/i;

/** `text` with every secret of a known shape replaced by its mask (the text itself when none). */
export function maskShapes(text: string): string {
  if (!ANY_SHAPE.test(text)) return text;
  let out = text;
  for (const s of SECRET_SHAPES) {
    if (!s.mayHold(out)) continue;
    s.pattern.lastIndex = 0;
    out = out.replace(s.pattern, s.replacement);
  }
  return out;
}
