import { maskShapes } from './secretShapes.js';

/** What a service definition runs: `node <cli> daemon --quiet` with the captured environment. */
export interface ServiceSpec {
  /** Absolute path of the Node binary that installed the service. */
  node: string;
  /** Absolute path of the CLI entry (dist/cli/main.js). */
  cli: string;
  /** Variables captured at install time: SVC_DATA_DIR and SVC_PORT always, other SVC_* when set, PATH. */
  env: Readonly<Record<string, string>>;
  /**
   * Variables that hold credentials (holdsCredential): systemd reads them from `envFile`, never
   * from the unit; launchd's plist holds them (it has no such indirection).
   */
  secretEnv?: Readonly<Record<string, string>>;
  /** The 0600 environment file beside the unit (`EnvironmentFile=`), when `secretEnv` has any. */
  envFile?: string | null;
  /** Where launchd writes the daemon's output (systemd sends it to the journal). */
  logFile: string;
}

/** The environment file beside the systemd unit. */
export const SYSTEMD_ENV_FILE = 'loom.env';

/** Names that say their value is a credential, whatever it looks like. */
const CREDENTIAL_NAME = /(?:TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIALS?)$/i;

/**
 * Whether a variable holds a credential the unit must not carry (behaviour.md §17): a value with a
 * secret of a known shape (URL user-info, a token query value, a GitHub or Loom token, …) or a name
 * that says so (`SVC_GITHUB_TOKEN`).
 */
export function holdsCredential(name: string, value: string): boolean {
  return CREDENTIAL_NAME.test(name) || maskShapes(value) !== value;
}

/** What the service's PATH needs to know of one entry: whether it is a folder, and writable by anyone. */
export type PathFacts = (dir: string) => { isDir: boolean; worldWritable: boolean } | null;

/**
 * The PATH a service keeps (behaviour.md §17): only absolute entries that are existing folders not
 * writable by anyone (the service runs CLI actions and `/exec` with it: a tool dropped into `/tmp` or
 * the current folder would run as the user). Duplicates are kept once; `dropped` lists what was left
 * out, in order (an empty entry as `""`).
 */
export function servicePath(path: string, facts: PathFacts): { kept: string[]; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const dir of path.split(':')) {
    if (kept.includes(dir)) continue;
    const f = dir.startsWith('/') ? facts(dir) : null;
    if (f && f.isDir && !f.worldWritable) kept.push(dir);
    else dropped.push(dir);
  }
  return { kept, dropped };
}

/** The systemd user unit's name, and the launchd agent's label (file `<label>.plist`). */
export const SYSTEMD_UNIT = 'loom.service';
export const LAUNCHD_LABEL = 'dev.loom.daemon';

/** A value the unit formats cannot carry safely (a line break would start a new directive), described; null when all are safe. Check before rendering. */
export function unsafeValue(spec: ServiceSpec): string | null {
  const values = [...Object.entries(spec.env).flat(), ...Object.entries(spec.secretEnv ?? {}).flat(), spec.node, spec.cli, spec.logFile, spec.envFile ?? ''];
  const bad = values.find((v) => /[\u0000-\u001f\u007f]/.test(v));
  return bad === undefined ? null : `${JSON.stringify(bad)} contains a control character`;
}

/**
 * One word of a systemd ExecStart= or Environment= line: always double-quoted, with `\` and `"`
 * escaped, `%` doubled (specifier expansion) and, for ExecStart, `$` doubled (variable expansion).
 */
function systemdWord(s: string, dollar: boolean): string {
  const escaped = s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  return `"${dollar ? escaped.replace(/\$/g, '$$$$') : escaped}"`;
}

/**
 * The systemd user unit (`~/.config/systemd/user/loom.service`, behaviour.md §17): restarted when
 * it fails, not when `loom stop` ends it cleanly; started with the user's session. Credentials are
 * read from `spec.envFile` (`EnvironmentFile=`, a path: `%` doubled, no quotes), never written here.
 */
export function systemdUnit(spec: ServiceSpec): string {
  const exec = [spec.node, spec.cli, 'daemon', '--quiet'].map((w) => systemdWord(w, true)).join(' ');
  const env = Object.entries(spec.env).map(([k, v]) => `Environment=${systemdWord(`${k}=${v}`, false)}`);
  if (spec.envFile) env.push(`EnvironmentFile=${spec.envFile.replace(/%/g, '%%')}`);
  return [
    '[Unit]',
    'Description=Loom daemon (local workspaces for AI agents)',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${exec}`,
    ...env,
    'Restart=on-failure',
    'RestartSec=2',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/**
 * The environment file of the systemd unit: one `NAME="value"` a line, with `\\`, `"`, `$` and
 * `` ` `` escaped as systemd's parser reads them inside double quotes.
 */
export function systemdEnvFile(env: Readonly<Record<string, string>>): string {
  return Object.entries(env).map(([k, v]) => `${k}="${v.replace(/[\\"$`]/g, (c) => `\\${c}`)}"\n`).join('');
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The launchd agent (`~/Library/LaunchAgents/dev.loom.daemon.plist`): started at login, restarted
 * when it exits unsuccessfully (KeepAlive SuccessfulExit=false), output to the daemon log.
 */
export function launchdPlist(spec: ServiceSpec): string {
  const args = [spec.node, spec.cli, 'daemon', '--quiet'].map((a) => `    <string>${xml(a)}</string>`);
  const env = Object.entries({ ...spec.env, ...spec.secretEnv }).flatMap(([k, v]) => [`    <key>${xml(k)}</key>`, `    <string>${xml(v)}</string>`]);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  <string>${LAUNCHD_LABEL}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...args,
    '  </array>',
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...env,
    '  </dict>',
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key>',
    '    <false/>',
    '  </dict>',
    '  <key>StandardOutPath</key>',
    `  <string>${xml(spec.logFile)}</string>`,
    '  <key>StandardErrorPath</key>',
    `  <string>${xml(spec.logFile)}</string>`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
