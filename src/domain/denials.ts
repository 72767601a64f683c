import { describeNetworkPolicy, type NetworkPolicy } from './networkPolicy.js';

/** behaviour.md §15.5: one thing the sandbox refused while a command ran. */
export interface Denial {
  kind: 'file' | 'network';
  target: string;
  reason: string;
}

/** `head.meta.sandbox` of a confined command that was refused something (behaviour.md §15.5). */
export interface SandboxMeta {
  mode: 'workspace';
  denied: Denial[];
}

/** At most this many items on the `loom sandbox: denied` line, then `and N more`. */
export const DENIAL_LINE_ITEMS = 5;

/** The error words of a refused file access in a program's own output (behaviour.md §15.5). */
const DENIED_WORDS = /Permission denied|Operation not permitted|\bEACCES\b|\bEPERM\b/;
/** An absolute path in an error line: `/…` up to a quote, colon-space, comma or the end. */
const PATH_IN_LINE = /(?:^|[\s'"`(‘“])(\/[^\s'"`:,)’”]*)/g;

/** True when `p` is `root` or below it. */
function under(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);
}

/**
 * The file paths a failed command's own error lines name that lie outside the agent's grants
 * (behaviour.md §15.5): lines with `Permission denied`, `Operation not permitted`, `EACCES` or
 * `EPERM`, each absolute path in them not under a granted root. In order, each once.
 */
export function fileDenials(output: string, granted: readonly string[]): Denial[] {
  const out: Denial[] = [];
  const seen = new Set<string>();
  for (const line of output.split('\n')) {
    const words = DENIED_WORDS.exec(line);
    if (!words) continue;
    for (const m of line.matchAll(PATH_IN_LINE)) {
      const p = m[1].replace(/\/+$/, '') || '/';
      if (seen.has(p) || granted.some((g) => under(p, g))) continue;
      seen.add(p);
      out.push({ kind: 'file', target: p, reason: words[0] === 'Operation not permitted' || words[0] === 'EPERM' ? 'operation not permitted' : 'outside the workspace' });
    }
  }
  return out;
}

/** What the agent was granted, as the denial line names it. */
export interface Grants {
  home: string;
  allowedPaths: readonly string[];
  network: NetworkPolicy;
}

/**
 * The last line of a failed confined command that was refused something (behaviour.md §15.5):
 * `loom sandbox: denied <what> (<reason>), …; allowed: <home>, <allowed paths>, network <policy>`.
 */
export function denialLine(denied: readonly Denial[], grants: Grants): string {
  const items = denied.slice(0, DENIAL_LINE_ITEMS).map((d) => `${d.target} (${d.reason})`);
  const more = denied.length > DENIAL_LINE_ITEMS ? ` and ${denied.length - DENIAL_LINE_ITEMS} more` : '';
  const allowed = [grants.home, ...grants.allowedPaths, `network ${describeNetworkPolicy(grants.network)}`].join(', ');
  return `loom sandbox: denied ${items.join(', ')}${more}; allowed: ${allowed}`;
}

/** A watch over one running command's network denials (behaviour.md §15.5). */
export interface DenialWatch {
  /** Stop watching; the denials seen while it ran. */
  stop(): Denial[];
}

/** A recent denial of an agent, with when it happened (for the inspector). */
export interface RecentDenial extends Denial {
  at: number;
}

/**
 * Where the egress proxy reports what it refused and commands collect what was refused while they
 * ran (behaviour.md §15.5): a refusal counts against every command of that agent running then.
 */
export interface DenialBoard {
  watch(agentId: string): DenialWatch;
  record(agentId: string, d: Denial, at: number): void;
  recent(agentId: string): RecentDenial[];
}

/** How many recent denials the board keeps per agent. */
export const RECENT_DENIALS = 20;

/** The in-memory board (keys are agent ids, user text: Maps, never objects). */
export function createDenialBoard(): DenialBoard {
  const open = new Map<string, Set<Denial[]>>();
  const recent = new Map<string, RecentDenial[]>();
  return {
    watch(agentId) {
      const seen: Denial[] = [];
      let set = open.get(agentId);
      if (!set) open.set(agentId, (set = new Set()));
      set.add(seen);
      return {
        stop() {
          const s = open.get(agentId);
          s?.delete(seen);
          if (s && s.size === 0) open.delete(agentId);
          return seen;
        },
      };
    },
    record(agentId, d, at) {
      for (const seen of open.get(agentId) ?? []) seen.push(d);
      const list = recent.get(agentId) ?? [];
      list.push({ ...d, at });
      if (list.length > RECENT_DENIALS) list.splice(0, list.length - RECENT_DENIALS);
      recent.set(agentId, list);
    },
    recent: (agentId) => [...(recent.get(agentId) ?? [])],
  };
}
