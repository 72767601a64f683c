/** What a service definition runs: `node <cli> daemon --quiet` with the captured environment. */
export interface ServiceSpec {
  /** Absolute path of the Node binary that installed the service. */
  node: string;
  /** Absolute path of the CLI entry (dist/cli/main.js). */
  cli: string;
  /** Variables captured at install time: SVC_DATA_DIR and SVC_PORT always, other SVC_* when set. */
  env: Readonly<Record<string, string>>;
  /** Where launchd writes the daemon's output (systemd sends it to the journal). */
  logFile: string;
}

/** The systemd user unit's name, and the launchd agent's label (file `<label>.plist`). */
export const SYSTEMD_UNIT = 'loom.service';
export const LAUNCHD_LABEL = 'dev.loom.daemon';

/** A value the unit formats cannot carry safely (a line break would start a new directive), described; null when all are safe. Check before rendering. */
export function unsafeValue(spec: ServiceSpec): string | null {
  const values = [...Object.entries(spec.env).flat(), spec.node, spec.cli, spec.logFile];
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
 * it fails, not when `loom stop` ends it cleanly; started with the user's session.
 */
export function systemdUnit(spec: ServiceSpec): string {
  const exec = [spec.node, spec.cli, 'daemon', '--quiet'].map((w) => systemdWord(w, true)).join(' ');
  const env = Object.entries(spec.env).map(([k, v]) => `Environment=${systemdWord(`${k}=${v}`, false)}`);
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

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The launchd agent (`~/Library/LaunchAgents/dev.loom.daemon.plist`): started at login, restarted
 * when it exits unsuccessfully (KeepAlive SuccessfulExit=false), output to the daemon log.
 */
export function launchdPlist(spec: ServiceSpec): string {
  const args = [spec.node, spec.cli, 'daemon', '--quiet'].map((a) => `    <string>${xml(a)}</string>`);
  const env = Object.entries(spec.env).flatMap(([k, v]) => [`    <key>${xml(k)}</key>`, `    <string>${xml(v)}</string>`]);
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
