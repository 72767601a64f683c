import { describe, expect, it } from '@jest/globals';
import { holdsCredential, servicePath, systemdEnvFile, systemdUnit, type ServiceSpec } from '../../src/domain/serviceUnit.js';

/** behaviour.md §17: what `loom service install` keeps out of the unit, and the PATH it keeps. */
describe('service definitions: credentials and PATH (src/domain/serviceUnit.ts)', () => {
  const spec: ServiceSpec = { node: '/opt/node/bin/node', cli: '/home/a/loom/dist/cli/main.js', env: { SVC_DATA_DIR: '/home/a/.loom', SVC_PORT: '3923' }, logFile: '/home/a/.loom/loom.log' };

  it('systemd: credentials are named by EnvironmentFile= (% doubled), and its file escapes what systemd unescapes', () => {
    const unit = systemdUnit({ ...spec, secretEnv: { SVC_T: 'x' }, envFile: '/home/a/50%/loom.env' });
    expect(unit).toContain('\nEnvironmentFile=/home/a/50%%/loom.env\n');
    expect(unit).not.toContain('SVC_T');
    expect(systemdEnvFile({ A: 'plain', B: 'q"b\\s$v`t' })).toBe('A="plain"\nB="q\\"b\\\\s\\$v\\`t"\n');
  });

  it('holdsCredential: secret shapes in the value (user-info, token query values, tokens) or a credential name', () => {
    for (const [k, v] of [['SVC_GITHUB_API', 'https://u:p@api.github.com'], ['SVC_X', 'https://h/?access_token=abc'], ['SVC_X', 'ghp_0123456789abcdefABCDEF'], ['SVC_GITHUB_TOKEN', 'abc'], ['SVC_API_KEY', 'abc']]) {
      expect([k, v, holdsCredential(k, v)]).toEqual([k, v, true]);
    }
    for (const [k, v] of [['SVC_GITHUB_API', 'https://api.github.com'], ['SVC_PORT', '3923'], ['SVC_DATA_DIR', '/home/a/.loom'], ['SVC_SANDBOX', 'workspace']]) {
      expect([k, v, holdsCredential(k, v)]).toEqual([k, v, false]);
    }
  });

  it('servicePath keeps absolute folders nobody else writes, once, in order', () => {
    const facts = (d: string) => ({ '/usr/bin': { isDir: true, worldWritable: false }, '/tmp': { isDir: true, worldWritable: true }, '/etc/hosts': { isDir: false, worldWritable: false } } as Record<string, { isDir: boolean; worldWritable: boolean }>)[d] ?? null;
    expect(servicePath('.::bin:/tmp:/usr/bin:/gone:/etc/hosts:/usr/bin', facts)).toEqual({ kept: ['/usr/bin'], dropped: ['.', '', 'bin', '/tmp', '/gone', '/etc/hosts'] });
  });

});
