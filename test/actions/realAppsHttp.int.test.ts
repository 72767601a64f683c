import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterRule, startAppsWorld, type AppsWorld } from './realApps.js';

/**
 * Real apps end to end, HTTP side: corpus documents copied and opened through /exec, their actions
 * called against a loopback stub that returns canned JSON, rendered output asserted.
 */

let w: AppsWorld;
const PNG = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 1, 2, 3]);

beforeAll(async () => {
  w = await startAppsWorld({
    weather: 'apps/apps/weather', translate: 'apps/apps/translate', websearch: 'apps/apps/websearch',
    wttr: 'cookbook/apps/weather', moltbook: 'cookbook/apps/moltbook-single', banana: 'cookbook/apps/nano-banana-pro',
  });
  const r = w.stub.routes;
  r.set('/geocoding-api.open-meteo.com/v1/search', { body: { results: [{ name: 'Seoul', country: 'South Korea', latitude: 37.566, longitude: 126.9784, timezone: 'Asia/Seoul', population: 10349312 }] } });
  r.set('/api.open-meteo.com/v1/forecast', (q) => ({
    body: q.query.includes('current_weather=true')
      ? { latitude: 37.56, longitude: 126.98, elevation: 38, timezone_abbreviation: 'KST', current_weather: { temperature: 21.3, windspeed: 7.2, winddirection: 250, weathercode: 1, is_day: 1, time: '2025-06-01T12:00' } }
      : { timezone: 'Asia/Seoul', elevation: 38, daily: { time: ['2025-06-01', '2025-06-02'], temperature_2m_min: [15.1, 16], temperature_2m_max: [24.2, 25], precipitation_sum: [0, 1.5], weathercode: [1, 61] } },
  }));
  r.set('/api.mymemory.translated.net/get', { body: { responseData: { translatedText: '안녕하세요 세계', match: 0.98 }, responseStatus: 200 } });
  r.set('/api.duckduckgo.com/', { body: { Heading: 'Markdown', AbstractText: 'Markdown is a lightweight markup language.', AbstractURL: 'https://en.wikipedia.org/wiki/Markdown' } });
  r.set('/en.wikipedia.org/api/rest_v1/page/summary/New%20York', { body: { title: 'New York', extract: 'New York is a city.', content_urls: { desktop: { page: 'https://en.wikipedia.org/wiki/New_York' } } } });
  r.set('/hn.algolia.com/api/v1/search', (q) => ({ body: { hits: [{ title: q.query.includes('query=') ? 'Rust 2.0' : 'Show HN: Loom', points: 120, num_comments: 33, objectID: '4101' }, { title: 'Second', points: 5, num_comments: 0, objectID: '4102' }] } }));
  r.set('/wttr.in/seoul', { headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'seoul: ☀️ Sunny +21°C ↗11km/h' });
  r.set('/wttr.in/40.7127281%2C-74.0060152', { headers: { 'Content-Type': 'text/plain' }, body: 'New York: ⛅ +18°C' });
  r.set('/wttr.in/Paris', { body: { nearest_area: [{ areaName: [{ value: 'Paris' }], country: [{ value: 'France' }] }], weather: [{ date: '2025-06-01', mintempC: '12', maxtempC: '22', avgtempC: '17', hourly: Array.from({ length: 8 }, (_, i) => ({ tempC: String(10 + i), weatherDesc: [{ value: 'Clear' }], winddir16Point: 'N', windspeedKmph: '5', chanceofrain: '0', precipMM: '0.0' })), astronomy: [{ sunrise: '05:47 AM', sunset: '09:50 PM' }] }] } });
  r.set('/nominatim.openstreetmap.org/search', { body: [{ lat: '40.7127281', lon: '-74.0060152', display_name: 'New York, United States' }, { lat: '43.0', lon: '-75.0', display_name: 'New York State' }] });
  r.set('/www.moltbook.com/api/v1/feed', { body: { posts: [{ id: 'p1', title: 'Hello agents', author: { name: 'ann' }, submolt: { display_name: 'general' } }, { id: 'p2', title: 'On memory', author: { name: 'bob' }, submolt: { display_name: 'aithoughts' } }] } });
  r.set('/www.moltbook.com/api/v1/posts/p2', { body: { post: { id: 'p2', title: 'On memory', author: { name: 'bob' }, content: 'Memory is **hard**.', upvotes: 12, downvotes: 1, comment_count: 4, submolt: { display_name: 'aithoughts' } } } });
  r.set('POST /www.moltbook.com/api/v1/posts', { status: 201, body: { post: { id: 'p9' } } });
  r.set('POST /generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-image-preview:generateContent', { body: { candidates: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } }] } }] } });
});
afterAll(async () => { await w?.close(); });

describe('real app: weather (Open-Meteo)', () => {
  it('when opened, then the document shows its actions and --help gives the call interface', async () => {
    expect(await w.open('weather', 'weather/string.md')).toContain('[actions] find_city, current, forecast');
    const help = await w.help('weather', 'find_city');
    expect(help).toContain('Usage: /act.find_city <name>');
    expect(help).toContain('--name <string>');
  });

  it('when find_city runs, then the query carries the name and the template renders the first result', async () => {
    expect(await w.ok('weather', '/act.find_city Seoul')).toBe([
      '## Seoul, South Korea', '', '- **Latitude:** 37.566', '- **Longitude:** 126.9784', '- **Timezone:** Asia/Seoul', '- **Population:** 10349312', '',
      'Next: `/act.current --latitude 37.566 --longitude 126.9784`',
    ].join('\n'));
    expect(w.stub.last().query).toBe('count=3&name=Seoul');
    expect(w.stub.last().headers.map(([n]) => n.toLowerCase()).sort()).toEqual(['connection', 'host']);
  });

  it('when current and forecast run with numbers (one negative), then they render', async () => {
    const cur = await w.ok('weather', '/act.current --latitude 37.57 --longitude -126.98');
    expect(w.stub.last().query).toBe('current_weather=true&timezone=auto&latitude=37.57&longitude=-126.98');
    expect(cur.split('\n').slice(0, 3)).toEqual(['## Current Weather', '', '- **Temperature:** 21.3°C']);
    const fc = await w.ok('weather', '/act.forecast 37.57 126.98');
    expect(fc).toContain('| 2025-06-02 | 16–25 | 1.5 | 61 |');
    expect(fc).toContain('warning: unresolved template reference {Response.body.daily.time.2}; Response.body.daily.time is an array of 2 items');
  });

  it('when a required field is missing, then the exact INVALID_ARGS with usage', async () => {
    const r = await w.exec('weather', '/act.current --latitude 1');
    expect(r.body).toBe('ERROR(INVALID_ARGS): Missing required: --longitude <number>\nUsage: /act.current <latitude> <longitude>\nRecovery: /act.current --help');
  });
});

describe('real app: translate (MyMemory)', () => {
  it('when opened and called, then {text} is encoded in the query and the | of langpair kept', async () => {
    await w.open('tr', 'translate/string.md');
    expect(await w.help('tr', 'translate')).toContain('Usage: /act.translate <text> <from> <to>');
    expect(await w.ok('tr', '/act.translate "Hello, world & more" en ko')).toBe('## Translation\n\n> 안녕하세요 세계\n\n- **Match quality:** 0.98\n- **Status:** 200');
    expect(w.stub.last().query).toBe('q=Hello%2C%20world%20%26%20more&langpair=en|ko');
    expect(await w.ok('tr', '/act.translate --text hi --from=en --to=ja')).toContain('> 안녕하세요 세계');
    expect(w.stub.last().query).toBe('q=hi&langpair=en|ja');
  });
});

describe('real app: websearch (DuckDuckGo, Wikipedia, HN)', () => {
  it('when search, wiki, hn and hn_search run, then each renders its answer', async () => {
    await w.open('ws', 'websearch/string.md');
    expect(await w.help('ws', 'hn_search')).toContain('Usage: /act.hn_search <query> [--hitsPerPage <number>]');
    expect(await w.ok('ws', '/act.search markdown')).toBe('## Markdown\n\nMarkdown is a lightweight markup language.\n\n**Source:** https://en.wikipedia.org/wiki/Markdown');
    expect(await w.ok('ws', '/act.wiki "New York"')).toBe('## New York\n\nNew York is a city.\n\n**Read more:** https://en.wikipedia.org/wiki/New_York');
    expect(await w.ok('ws', '/act.hn')).toBe('## Hacker News — Front Page\n\n- **Show HN: Loom** (120 pts, 33 comments) — https://news.ycombinator.com/item?id=4101\n- **Second** (5 pts, 0 comments) — https://news.ycombinator.com/item?id=4102');
    await w.ok('ws', '/act.hn_search rust --hitsPerPage 2');
    expect(w.stub.last().query).toBe('tags=story&query=rust&hitsPerPage=2');
  });
});

describe('real app: cookbook weather (wttr.in, default action, $CITY, shortcuts)', () => {
  it('when $CITY is set in the config scope and the app opens, then the default action shows the weather', async () => {
    await w.ok('app:wttr:seoul', '/set $CITY = "seoul"');
    const body = await w.open('app:wttr:seoul', 'wttr/string.md');
    expect(await w.help('app:wttr:seoul', 'now')).toContain('  --city <string>   optional  City name or lat,lon; default "$CITY"');
    expect(afterRule(body)).toBe('seoul: ☀️ Sunny +21°C ↗11km/h\n\nnext: /act.forecast seoul for 3-day · /act.search "..." for ambiguous names');
    expect(w.stub.last().query).toBe('format=%l:+%C+%t+%w&m');
    expect(w.stub.last().headers).toContainEqual(['User-Agent', 'curl/8']);
  });

  it('when search registers @city-N, then /act.now --city @city-1 uses that value', async () => {
    expect(await w.ok('app:wttr:seoul', '/act.search "New York"')).toBe('Search: "New York"\n\n- @city-1: New York, United States\n- @city-2: New York State\n\nnext: /act.now @city-N · /act.forecast @city-N');
    expect(await w.ok('app:wttr:seoul', '/act.now --city @city-1')).toContain('New York: ⛅ +18°C');
  });

  it('when the document\'s own hint passes the optional city positionally, then spec §4.10.2 refuses it', async () => {
    // The app's next: line suggests `/act.now @city-N`, but `city` is optional and optional fields
    // are never bound positionally (spec §4.10 item 2); the spec wins over the document's hint.
    const r = await w.exec('app:wttr:seoul', '/act.now @city-1');
    const body = r.body ?? '';
    expect(body).toBe('ERROR(INVALID_ARGS): Too many positional values for /act.now: 1 given, 0 expected (none)\nRecovery: /act.now --city @city-1');
    // The Recovery line is the exact call that works.
    const fixed = await w.exec('app:wttr:seoul', body.split('\nRecovery: ')[1]);
    expect(fixed.head?.ok).toBe(true);
  });

  it('when forecast runs, then assignments and loops render (assigned names differ from the input field)', async () => {
    const out = await w.ok('app:wttr:seoul', '/act.forecast --city Paris');
    expect(out.split('\n').slice(0, 4)).toEqual(['**Paris, France** — 3-day forecast (°C, km/h, mm rain)', '', '### 2025-06-01 (12–22°C, avg 17°C)', '- 06: 12°C, Clear, wind N 5km/h, rain 0% (0.0mm)']);
    expect(out.endsWith('next: /act.now Paris for current · /act.forecast <other-city>')).toBe(true);
  });
});

describe('real app: moltbook (single page; Authorization from $MOLTBOOK_API_KEY; -d body)', () => {
  it('when opened, then the default feed registers @feed-N', async () => {
    await w.ok('molt', '/set $MOLTBOOK_API_KEY = "mk_live_123"');
    const body = await w.open('molt', 'moltbook/string.md');
    expect(await w.help('molt', 'post')).toContain('Usage: /act.post <submolt> <title> [--content <string>]');
    expect(afterRule(body)).toBe('Feed (hot):\n\n- @feed-1: Hello agents — by ann in /general\n- @feed-2: On memory — by bob in /aithoughts\n\nnext: /act.read @feed-N');
    expect(w.stub.last().query).toBe('sort=hot&limit=20');
    expect(w.stub.last().headers).toContainEqual(['Authorization', 'Bearer mk_live_123']);
  });

  it('when read gets @feed-2, then the post renders from session variables', async () => {
    expect(await w.ok('molt', '/act.read @feed-2')).toBe('## On memory\nby bob in /aithoughts | 12 up / 1 down | 4 comments\n\nMemory is **hard**.\n\nnext: /act.comment @post "..."  ·  /act.upvote @post');
    expect(w.stub.last().path).toBe('/www.moltbook.com/api/v1/posts/p2');
    expect((await w.ok('molt', '/info @post')) ?? '').toContain('p2');
  });

  it('when post sends the -d template, then values are JSON-escaped inside the string literals', async () => {
    // {title} and {submolt} are also session variables assigned by the earlier read: in template
    // output the session variable wins over the payload field (spec §4.11 pass order, behaviour.md
    // §12 item 5) — the cookbook's "input fields shadow assignment vars" gotcha, seen from this side.
    expect(await w.ok('molt', '/act.post general "A \\"quoted\\" title" --content "line1\nline2"')).toBe('Posted: On memory in /aithoughts → @post');
    expect(JSON.parse(w.stub.last().body)).toEqual({ submolt_name: 'general', title: 'A "quoted" title', content: 'line1\nline2' });
    expect(w.stub.last().headers).toContainEqual(['Content-Type', 'application/json']);
  });
});

describe('real app: nano-banana-pro (body template, save/decode/to, base64file)', () => {
  it('when generate runs, then the image bytes are decoded and written and @image is bound', async () => {
    await w.ok('nb', '/set $GEMINI_API_KEY = "AIza-test"');
    await w.open('nb', 'banana/string.md');
    expect(await w.help('nb', 'generate')).toContain('Usage: /act.generate <prompt> <filename> [--resolution <string>]');
    const out = await w.ok('nb', '/act.generate --prompt "a serene \\"japanese\\" garden" --filename out/garden.png');
    expect(out).toBe('Saved: out/garden.png (image/png, 1K) — also bound as @image\n\nnext: /act.edit -p "Change ONLY: ..." -i @image -f <new-name> · regenerate with a new prompt');
    expect(readFileSync(join(w.home, 'out', 'garden.png'))).toEqual(PNG);
    const sent = JSON.parse(w.stub.last().body);
    expect(sent.contents[0].parts[0].text).toBe('a serene "japanese" garden');
    expect(w.stub.last().headers).toContainEqual(['x-goog-api-key', 'AIza-test']);
  });

  it('when edit gets -i @image, then base64file sends the bytes of the earlier output', async () => {
    const out = await w.ok('nb', '/act.edit -p "night" -f out/night.png -i @image -r 2K');
    expect(out.split('\n')[0]).toBe('Saved: out/night.png (image/png, 2K, edited from out/garden.png) — @image now points here');
    const sent = JSON.parse(w.stub.last().body);
    expect(sent.contents[0].parts[0].inlineData.data).toBe(PNG.toString('base64'));
    expect(sent.generationConfig.imageConfig.imageSize).toBe('2K');
  });
});
