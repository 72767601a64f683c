import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { validateManifest } from '../../src/sfmd/manifest.js';
import { parseDocument } from '../../src/sfmd/parse.js';
import { CLI, startDaemon, type RunningDaemon } from '../helpers/daemon.js';

/*
 * examples/quickstart: the app document parses without warnings, the manifest is a
 * valid install manifest, and every MCP host configuration starts a working `loom` tool the way
 * its host would (`loom` on PATH is the built CLI here).
 */

const dir = join(process.cwd(), 'examples', 'quickstart');
const json = (f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>;

let d: RunningDaemon;
beforeAll(async () => { d = await startDaemon(); });
afterAll(async () => { await d?.kill(); });

describe('examples/quickstart', () => {
  it('the app document declares list, add, read and wc, with no warnings', () => {
    const doc = parseDocument(readFileSync(join(dir, 'notes.md'), 'utf8'));
    expect(doc.actions.map((a) => a.id)).toEqual(['list', 'add', 'read', 'wc']);
    expect(doc.warnings).toEqual([]);
  });

  it('the manifest is a valid install manifest whose string.md the demo API serves', () => {
    const r = validateManifest(json('manifest.json') as { files: unknown[] }, 'http://127.0.0.1:3930/manifest.json');
    expect(r).toMatchObject({ ok: true, manifest: { delivery: 'local', files: [{ path: 'string.md', url: 'http://127.0.0.1:3930/notes.md' }] } });
  });

  const stdio = readdirSync(join(dir, 'mcp')).filter((f) => f.endsWith('.json') && f !== 'http.json');

  it('there are host configurations for Claude Desktop, Claude Code, Cursor and VS Code', () => {
    expect(stdio.sort()).toEqual(['claude-code.mcp.json', 'claude-desktop.json', 'cursor.json', 'vscode.json']);
  });

  it.each(stdio)('when a host launches the server of %s, then it serves the loom tool', async (file) => {
    const cfg = json(join('mcp', file));
    const servers = (cfg.mcpServers ?? cfg.servers) as Record<string, { command: string; args: string[]; type?: string; env?: Record<string, string> }>;
    const loom = servers.loom;
    expect(loom.command).toBe('loom');
    expect(loom.args.slice(0, 3)).toEqual(['mcp', '--agent', 'leo']);
    if (loom.type !== undefined) expect(loom.type).toBe('stdio');
    const client = new Client({ name: `host-${file}`, version: '0.0.1' });
    await client.connect(new StdioClientTransport({
      command: process.execPath,
      args: [CLI, ...loom.args],
      env: { ...(process.env as Record<string, string>), ...(loom.env ?? {}), SVC_PORT: String(d.port), SVC_DATA_DIR: d.dataDir },
      stderr: 'pipe',
    }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['loom']);
      const r = (await client.callTool({ name: 'loom', arguments: { topic: 'main', cmd: '/help' } })) as { content: Array<{ text: string }>; isError: boolean };
      expect(r.isError).toBe(false);
      expect(r.content[0].text.startsWith('<loom topic="main">\nLoom commands\n---\n')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('when a host speaks Streamable HTTP with http.json, then the URL and header reach the tool', async () => {
    const loom = (json(join('mcp', 'http.json')).mcpServers as Record<string, { type: string; url: string; headers: Record<string, string> }>).loom;
    expect(loom.type).toBe('http');
    const url = loom.url.replace(':3923/', `:${d.port}/`);
    const r = await fetch(url, {
      method: 'POST',
      headers: { ...loom.headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'loom', arguments: { topic: 'main', cmd: '/info' } } }),
    });
    const body = (await r.json()) as { result: { content: Array<{ text: string }> } };
    expect(body.result.content[0].text).toContain('agent:     leo');
  });
});
