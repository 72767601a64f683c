import { realpathSync } from 'node:fs';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The path as given and its real path (when it resolves), longest first, without a trailing `/`. */
function forms(path: string): string[] {
  const out = new Set([path.replace(/\/+$/, '')]);
  try {
    out.add(realpathSync.native(path));
  } catch {
    // Gone or unreadable: the given form is all there is to hide.
  }
  return [...out].filter((p) => p.length > 1).sort((a, b) => b.length - a.length);
}

/**
 * An install failure's text as the agent sees it: the home shown as `~` and the data directory as
 * `<data>`, so that no error names an absolute path inside the data directory (a default home lies
 * inside it; a file system error names its staging folder). Whole path segments only.
 */
export function hidePrivatePaths(text: string, home: string, dataDir?: string): string {
  let out = text;
  const places: Array<[string, string]> = [...forms(home).map((p): [string, string] => [p, '~']), ...(dataDir ? forms(dataDir).map((p): [string, string] => [p, '<data>']) : [])];
  for (const [path, shown] of places) {
    if (out.includes(path)) out = out.replace(new RegExp(`${escapeRe(path)}(?![^/\\s'"\`:,;)\\]}])`, 'g'), shown);
  }
  return out;
}
