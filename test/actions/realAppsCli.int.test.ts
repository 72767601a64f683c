import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterRule, startAppsWorld, type AppsWorld } from './realApps.js';

/**
 * Real apps end to end, CLI side: corpus documents copied and opened through /exec; `gh`, `curl`,
 * `string`, `pandoc`, `yt-dlp`, `whisper` and the kanban helper are fakes first on PATH that log
 * every argument; python3 and coreutils are real.
 */

let w: AppsWorld;

beforeAll(async () => {
  w = await startAppsWorld({
    'gh-issue': 'apps/apps/gh-issue', 'gh-kanban': 'apps/apps/gh-kanban', github: 'apps/apps/github', humanizer: 'apps/apps/humanizer',
    'agent-message': 'apps/apps/agent-message', notion: 'apps/apps/notion', docx: 'apps/apps/docx', youtube: 'apps/apps/youtube', whisper: 'apps/apps/whisper',
  });
  w.calls();
});
afterAll(async () => { await w?.close(); });

describe('real app: gh-issue (fake gh; tuple shortcuts)', () => {
  it('when opened with $REPO set, then repo lists issues as @issue-N tuples from gh JSON', async () => {
    await w.ok('gh', '/set $REPO = "octo/app"');
    expect(await w.open('gh', 'gh-issue/string.md')).toContain('[actions] repo, search, mine, read, comment, label, assign');
    expect(await w.help('gh', 'comment')).toContain('Usage: /act.comment <issue> <body>');
    expect(await w.ok('gh', '/act.repo --state closed')).toBe([
      '# Issues', '',
      '- @issue-1 octo/app#7: Crash on start — OPEN, updated 2025-06-01T10:00:00Z',
      '- @issue-2 octo/lib#12: Docs typo — OPEN, updated 2025-05-30T08:00:00Z', '',
      'next: /act.read @issue-N · /act.comment @issue-N "..." · /act.label @issue-N "..."',
    ].join('\n'));
    expect(w.calls()).toEqual([['gh', 'search', 'issues', '--repo', 'octo/app', '--state', 'closed', '--limit', '20', '--sort', 'updated', '--json', 'repository,number,title,state,labels,assignees,updatedAt,url']]);
  });

  it('when read gets @issue-1, then the tuple slots become separate arguments and loops render', async () => {
    const out = await w.ok('gh', '/act.read @issue-1');
    expect(w.calls()[0].slice(0, 5)).toEqual(['gh', 'issue', 'view', '7', '--repo']);
    expect(out.split('\n').slice(0, 9)).toEqual(['# octo/app#7: Crash on start', '', 'State: OPEN · Updated: 2025-06-01T12:00:00Z', 'Author: carol', 'URL: https://github.com/octo/app/issues/7', '', 'Labels:', '- bug', '- p1']);
    expect(out).toContain('- bob (2025-06-01T11:00:00Z): Same here');
  });

  it('when comment gets a hostile body, then gh receives it as one literal argument', async () => {
    const body = 'It\'s "fixed" — $(id) `whoami`; rm -rf ~';
    const out = await w.ok('gh', `/act.comment @issue-2 "${body.replace(/"/g, '\\"')}"`);
    expect(w.calls()).toEqual([['gh', 'issue', 'comment', '12', '--repo', 'octo/lib', '--body', body]]);
    expect(out).toBe('Commented on octo/lib#12.\n\nhttps://github.com/octo/lib/issues/12#issuecomment-42\n\nnext: /act.read @issue-N · /act.repo');
  });
});

describe('real app: gh-kanban (default board, ./kanban helper, tuple cards)', () => {
  it('when opened with $OWNER and $PROJECT_NUMBER, then the default board renders and registers @card-N', async () => {
    await w.ok('kb', '/set $OWNER = "octo"');
    await w.ok('kb', '/set $PROJECT_NUMBER = "5"');
    const board = afterRule(await w.open('kb', 'gh-kanban/string.md'));
    expect(await w.help('kb', 'move')).toContain('Positional order: card, to');
    expect(board.split('\n').slice(0, 8)).toEqual([
      '# GitHub Kanban — octo / Project 5', '', 'Filter: all · Total 3 · Limit per column 50', '',
      'Summary: Backlog 1 · Todo 1 · Ready 0 · In progress 1 · In review 0 · Done 0 · Other 0', '', '## Backlog', '',
    ]);
    expect(w.calls()).toEqual([['kanban', 'board', 'octo', '5', 'all', '50']]);
    // Every loop numbers its elements from 1 (behaviour.md §4.11), so the last loop with an element
    // (In progress) owns @card-1.
    expect(await w.ok('kb', '/info @card-1')).toBe('@card-1 → (13, octo/lib)');
  });

  it('when card and move run with @card-1, then the slots reach the helper in order', async () => {
    expect((await w.ok('kb', '/act.card @card-1')).split('\n')[0]).toBe('# octo/lib#13: Write docs');
    expect(await w.ok('kb', '/act.move @card-1 "In review"')).toBe('Moved octo/lib#13: Write docs\n\nBacklog -> In review\n\nnext: /act.refresh');
    expect(w.calls()).toEqual([['kanban', 'card', '13', 'octo/lib'], ['kanban', 'move', 'octo', '5', '13', 'octo/lib', 'In review']]);
  });
});

describe('real app: github (gh templates reach gh untouched)', () => {
  it('when my_issues and notifications run, then {{…}} Go templates and the jq filter are passed literally', async () => {
    await w.open('ghb', 'github/string.md');
    expect(await w.ok('ghb', '/act.my_issues')).toBe('### octo/app#7: Crash on start\n- **Updated:** 2025-06-01T10:00:00Z');
    const call = w.calls()[0];
    expect(call[call.length - 1]).toBe('{{range .}}### {{.repository.nameWithOwner}}#{{.number}}: {{.title}}{{"\\n"}}- **Updated:** {{.updatedAt}}{{"\\n\\n"}}{{end}}');
    expect(await w.ok('ghb', '/act.notifications')).toBe('No unread notifications.');
    expect(w.calls()[0].slice(0, 4)).toEqual(['gh', 'api', 'notifications', '--jq']);
  });

  it('when the issues page is opened, then list_issues passes flags and defaults', async () => {
    await w.open('ghb', 'github/issues.md');
    expect(await w.help('ghb', 'list_issues')).toContain('Usage: /act.list_issues <repo> [--state <string>] [--limit <number>]');
    expect(await w.ok('ghb', '/act.list_issues octo/app --limit 5')).toContain('### #8: Slow build');
    expect(w.calls()[0].slice(0, 9)).toEqual(['gh', 'issue', 'list', '--repo', 'octo/app', '--state', 'open', '--limit', '5']);
  });
});

describe('real app: humanizer (real python3)', () => {
  it('when opened, then the default check is not run for lack of --text', async () => {
    expect(afterRule(await w.open('hz', 'humanizer/string.md'))).toBe('[default] /act.check not run — missing required: --text <string>\nnext: /act.check --help');
    expect(await w.help('hz', 'check')).toContain('Usage: /act.check <text>');
  });

  it('when check runs on AI-sounding text and on plain text, then python3 reports the patterns', async () => {
    const out = await w.ok('hz', '/act.check "We delve into a crucial landscape — it is worth noting: fast, cheap, and good."');
    expect(out).toBe('## AI Pattern Check\n\n- **AI word:** `delve`\n- **AI word:** `crucial`\n- **AI word:** `landscape`\n- **Pattern:** Em dash overuse\n- **Pattern:** Rule of three\n- **Pattern:** Vague attribution\n\n**Found 6 pattern(s).**');
    expect((await w.ok('hz', '/act.check --text "I fixed the bug. It\'s done."')).endsWith('No AI patterns detected.')).toBe(true);
  });
});

describe('real app: agent-message (fake curl and string CLI)', () => {
  it('when send runs, then the message goes to curl on stdin and the event id renders', async () => {
    await w.ok('am', '/set $WEBHOOK_URL = "http://127.0.0.1:3923/webhook/wh_target"');
    await w.open('am', 'agent-message/string.md');
    expect(await w.help('am', 'send')).toContain('Usage: /act.send <message> [--webhook_url <string>]');
    const out = await w.ok('am', '/act.send "Review PR #31 when you\'re free; $(rm -rf ~) stays text."');
    expect(out).toBe('Sent message to rex.\n\n- event_id: evt_01TESTTESTTESTTESTTESTTEST\n- next: target reads it with `/events.read evt_01TESTTESTTESTTESTTESTTEST`');
    const call = w.calls()[0];
    expect(call).toContain('http://127.0.0.1:3923/webhook/wh_target');
    expect(call[call.length - 1]).toBe("stdin=Review PR #31 when you're free; $(rm -rf ~) stays text.");
  });

  it('when webhook runs, then the string CLI output is filtered to the URL', async () => {
    expect(await w.ok('am', '/act.webhook --agent rex')).toBe('Webhook URL for agent rex:\n\nhttp://127.0.0.1:3923/webhook/wh_fake_rex\n\nnext: /set $WEBHOOK_URL = "http://127.0.0.1:3923/webhook/wh_fake_rex"');
    expect(w.calls()).toEqual([['string', '--agent', 'rex', 'event', 'webhook', 'show']]);
  });
});

describe('real app: notion (fake curl, real python3, $NOTION_TOKEN exported not pasted)', () => {
  it('when search and read run, then python3 formats the fake API answers', async () => {
    await w.ok('nt', '/set $NOTION_TOKEN = "secret_abc"');
    await w.open('nt', 'notion/string.md');
    expect(await w.help('nt', 'search')).toContain('Usage: /act.search <query> [--limit <number>]');
    expect(await w.ok('nt', '/act.search "road map" --limit 2')).toBe('### Roadmap\n- **Type:** page | **ID:** p-1\n- **URL:** https://notion.so/p-1\n\n### Tasks\n- **Type:** database | **ID:** db-2\n- **URL:** https://notion.so/db-2');
    const call = w.calls()[0];
    expect(call).toContain('Authorization: Bearer secret_abc');
    expect(call[call.length - 1]).toBe('stdin={"query": "road map", "page_size": 2}');
    expect(await w.ok('nt', '/act.read p-1')).toBe('Q3 plan\nShip the parser.');
  });
});

describe('real app: docx (fake pandoc; default read without a file)', () => {
  it('when opened, then the default read names its missing field; read and to_docx then run', async () => {
    expect(afterRule(await w.open('dx', 'docx/string.md'))).toBe('[default] /act.read not run — missing required: --file <string>\nnext: /act.read --help');
    expect(await w.help('dx', 'to_docx')).toContain('Positional order: input, output');
    const md = join(w.home, 'my notes.md');
    writeFileSync(md, 'Hello *docs*');
    expect(await w.ok('dx', `/act.read --file "${md}"`)).toBe('# Converted\n\nHello *docs*');
    const out = join(w.home, 'my notes.docx');
    expect(await w.ok('dx', `/act.to_docx "${md}" "${out}"`)).toBe(`Created: ${out}`);
    expect(readFileSync(out, 'utf8')).toBe('DOCX(Hello *docs*)');
  });
});

describe('real app: youtube (fake yt-dlp)', () => {
  it('when info and search run, then the printed metadata is the output', async () => {
    await w.open('yt', 'youtube/string.md');
    expect(await w.help('yt', 'search')).toContain('Usage: /act.search <query> [--limit <number>]');
    w.calls();
    expect(await w.ok('yt', '/act.info https://www.youtube.com/watch?v=dQw4w9WgXcQ')).toContain('## Never Gonna Give You Up');
    expect(w.calls()[0].pop()).toBe('https://www.youtube.com/watch?v=dQw4w9WgXcQ');
    const out = await w.ok('yt', '/act.search "lofi beats" --limit 2');
    expect(out.split('\n')[0]).toBe('### lofi beats result 1');
    expect(out).toContain('### lofi beats result 2');
    expect(w.calls()[0][1]).toBe('ytsearch2:lofi beats');
  });
});

describe('real app: whisper (fake whisper; defaults fill --model and --language)', () => {
  it('when opened and transcribe runs, then defaults reach the tool and the transcript prints', async () => {
    expect(afterRule(await w.open('wh', 'whisper/string.md'))).toBe('[default] /act.transcribe not run — missing required: --file <string>\nnext: /act.transcribe --help');
    const audio = join(w.home, 'memo.mp3');
    writeFileSync(audio, 'ID3');
    expect(await w.ok('wh', `/act.transcribe ${audio} --language ko`)).toBe('Transcript of memo.mp3 (model base, language ko)');
    expect(w.calls()[0].slice(0, 6)).toEqual(['whisper', audio, '--model', 'base', '--language', 'ko']);
    expect(await w.help('wh', 'transcribe_srt')).toContain('Usage: /act.transcribe_srt <file> [--model <string>] [--language <string>]');
    expect(await w.ok('wh', `/act.transcribe_srt --file "${audio}" --model small`)).toBe('Transcript of memo.mp3 (model small, language en)');
    expect(w.calls()[0].slice(6, 10)).toEqual(['--output_format', 'srt', '--output_dir', '/tmp/whisper-out']);
  });
});
