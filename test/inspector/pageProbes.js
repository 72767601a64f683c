// Probes the inspector's browser tests install in the page (playwright's addInitScript): they read
// the page's layout and its badge from inside, where the DOM is. A plain browser script, so the
// tests' TypeScript (lib ES2023, no DOM) needs no DOM types of its own.

/** Every text the badge (#conn) showed, with whether the agents still said "Waiting for the daemon…". */
const badgeSeen = [];
new MutationObserver(() => {
  const badge = document.getElementById('conn')?.textContent ?? '';
  const waiting = (document.getElementById('agents')?.textContent ?? '').includes('Waiting for the daemon');
  const last = badgeSeen[badgeSeen.length - 1];
  if (!last || last[0] !== badge || last[1] !== waiting) badgeSeen.push([badge, waiting]);
}).observe(document, { subtree: true, childList: true, characterData: true });

/** Every visible element whose box reaches past the viewport's right (or left) edge. */
function pastViewport() {
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > window.innerWidth + 0.5 || r.left < -0.5) out.push(`${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''} ${Math.round(r.left)}–${Math.round(r.right)}: ${(el.textContent ?? '').slice(0, 40)}`);
  }
  return out;
}

/** Pairs of different text nodes whose line boxes overlap (by more than a pixel each way). */
function overlappingTexts() {
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n = 0;
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    n++;
    if (!t.textContent.trim() || t.parentElement?.closest('title, option, script, style')) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    for (const r of range.getClientRects()) {
      if (r.width < 1 || r.height < 1) continue;
      boxes.push({ text: t.textContent.trim().slice(0, 30), node: n, x: r.left, y: r.top, r: r.right, b: r.bottom });
    }
  }
  const out = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      if (a.node === b.node) continue;
      const w = Math.min(a.r, b.r) - Math.max(a.x, b.x);
      const h = Math.min(a.b, b.b) - Math.max(a.y, b.y);
      if (w > 1 && h > 1) out.push(`"${a.text}" × "${b.text}"`);
    }
  }
  return out;
}

/** Words of the topics' commands split over two lines (a word that fits its cell must stay whole). */
function brokenWords() {
  const out = [];
  for (const code of document.querySelectorAll('article.topic code')) {
    const text = code.firstChild;
    if (!(text instanceof Text)) continue;
    let at = 0;
    for (const word of text.textContent.split(' ')) {
      const range = document.createRange();
      range.setStart(text, at);
      range.setEnd(text, at + word.length);
      at += word.length + 1;
      const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (word.length > 0 && word.length < 30 && lines.size > 1) out.push(word);
    }
  }
  return out;
}

/** Whether the timeline's left padding holds its widest number (`15. `), and how many items it has. */
function listNumbersFit() {
  const list = document.getElementById('timeline');
  const probe = document.createElement('span');
  probe.textContent = `${list.children.length}. `;
  probe.style.font = getComputedStyle(list).font;
  probe.style.position = 'absolute';
  document.body.append(probe);
  const need = probe.getBoundingClientRect().width;
  probe.remove();
  return { items: list.children.length, need, room: parseFloat(getComputedStyle(list).paddingLeft) };
}

/** The last-commands header cells of a topic card: each text ends at least 6 px before the next cell. */
function headerGaps(topic) {
  return [...document.querySelectorAll(`article.topic[data-topic="${topic}"] table.recent thead th`)].map((th) => {
    const r = document.createRange();
    r.selectNodeContents(th);
    const next = th.nextElementSibling ? th.nextElementSibling.getBoundingClientRect().left : Infinity;
    return { text: th.textContent, apart: parseFloat(getComputedStyle(th).paddingRight) >= 6 && r.getBoundingClientRect().right + 6 <= next };
  });
}

/** Labels of the diagram lying on another edge's line (sampled every pixel along each path). */
function labelsOnOtherEdges() {
  const svg = document.querySelector('#diagram svg');
  const out = [];
  const paths = [...svg.querySelectorAll('path.edge')];
  for (const t of svg.querySelectorAll('text.edge-label')) {
    const b = t.getBBox();
    for (const p of paths) {
      if (p.getAttribute('data-edge') === t.getAttribute('data-edge')) continue;
      for (let s = 0, len = p.getTotalLength(); s <= len; s += 1) {
        const pt = p.getPointAtLength(s);
        if (pt.x > b.x && pt.x < b.x + b.width && pt.y > b.y && pt.y < b.y + b.height) {
          out.push(`${t.getAttribute('data-edge')} on ${p.getAttribute('data-edge')}`);
          break;
        }
      }
    }
  }
  return out;
}

/** The topic cards as `agent/topic` with the shown rows of their last commands (`ok /exec true`). */
function topicsShown() {
  return [...document.querySelectorAll('article.topic')].map((t) => ({
    topic: `${t.getAttribute('data-agent')}/${t.getAttribute('data-topic')}`,
    rows: [...t.querySelectorAll('table.recent tbody tr')].map((r) => `${r.className} ${r.querySelector('code')?.textContent}`),
  }));
}

window.loomProbes = { badgeSeen, pastViewport, overlappingTexts, brokenWords, listNumbersFit, headerGaps, labelsOnOtherEdges, topicsShown };
