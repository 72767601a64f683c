// The state diagram of one machine (behaviour.md §13.5), drawn from GET /inspect/machines: the
// layout (node positions, edge routes, label places) is computed by dagre, the graph-layout
// library served from the package's node_modules; this file only turns its result into SVG.

import dagre from '/inspect/assets/vendor/dagre.js';

const SVG = 'http://www.w3.org/2000/svg';
const ANY = '(any state)';
const START = '(start)';
const CHAR_W = 7;
/** Label lines an edge may carry (behaviour.md §13.8); more events: the last line says `+N more`. */
const LABEL_LINES_MAX = 3;
const LINE_H = 13;

/** An edge's label lines: its events, or the first ones and `+N more` (the full list is its tooltip). */
export function labelLines(labels) {
  if (labels.length <= LABEL_LINES_MAX) return labels;
  const kept = labels.slice(0, LABEL_LINES_MAX - 1);
  return [...kept, `+${labels.length - kept.length} more`];
}

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Edges grouped by (source, target): one arrow per pair, its label the events that take it. */
function edgesOf(machine) {
  const pairs = new Map();
  const add = (from, to, label) => {
    const key = `${from}\u0000${to}`;
    if (!pairs.has(key)) pairs.set(key, { from, to, labels: [] });
    const p = pairs.get(key);
    if (!p.labels.includes(label)) p.labels.push(label);
  };
  for (const t of machine.transitions) {
    const from = t.source ?? ANY;
    const label = t.guard ? `${t.event} [${t.guard}]` : t.event;
    if (t.targets.length === 0) add(from, from, label);
    for (const to of t.targets) add(from, to, label);
  }
  if (machine.initial) add(START, machine.initial, '');
  return [...pairs.values()];
}

/** Height of a self-loop's arc above its state, and the gap between the arc and its label. */
const LOOP_H = 18;
const LOOP_GAP = 4;
const labelWidth = (lines) => Math.max(...lines.map((l) => l.length), 0) * 5.6;

/**
 * Lay out a machine with dagre; returns the graph with positions. A state's self-loop (events that
 * keep it where it is) is drawn as an arc on top of it with its label above: dagre gets the state
 * as one box holding the rectangle, the arc and the label, so no other node, edge or label is
 * placed there. `n.box` is the rectangle alone.
 */
function layout(machine) {
  const g = new dagre.graphlib.Graph({ multigraph: true, compound: true });
  g.setGraph({ rankdir: 'LR', nodesep: 28, ranksep: 64, edgesep: 16, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const edges = edgesOf(machine);
  const loops = new Map(edges.filter((e) => e.from === e.to).map((e) => [e.from, { lines: labelLines(e.labels.filter(Boolean)), all: e.labels }]));
  const parents = new Set(machine.states.map((s) => s.parent).filter(Boolean));
  const node = (id, attrs) => {
    // A compound state's size is dagre's to choose: its self-loop is drawn inside its top edge.
    const loop = parents.has(id) ? undefined : loops.get(id);
    const extra = loop ? LOOP_H + LOOP_GAP + loop.lines.length * LINE_H : 0;
    g.setNode(id, { ...attrs, loop: loops.get(id), boxHeight: attrs.height, boxWidth: attrs.width, width: Math.max(attrs.width, loop ? labelWidth(loop.lines) + 8 : 0), height: attrs.height + extra });
  };
  for (const s of machine.states) node(s.id, { label: s.id.split('.').pop(), width: Math.max(64, s.id.length * CHAR_W + 24), height: 32, state: s });
  for (const s of machine.states) if (s.parent) g.setParent(s.id, s.parent);
  if (edges.some((e) => e.from === ANY)) node(ANY, { label: 'any state', width: 80, height: 26, pseudo: true });
  if (machine.initial) node(START, { label: '', width: 12, height: 12, pseudo: true, start: true });
  edges.forEach((e, i) => {
    if (e.from === e.to) return;
    const lines = labelLines(e.labels.filter(Boolean));
    g.setEdge(e.from, e.to, { lines, all: e.labels, width: labelWidth(lines), height: lines.length * LINE_H, labelpos: 'c' }, `e${i}`);
  });
  dagre.layout(g);
  for (const id of g.nodes()) {
    const n = g.node(id);
    // The rectangle sits at the bottom of the node's box (a compound state: the whole box).
    const [w, h] = parents.has(id) ? [n.width, n.height] : [n.boxWidth, n.boxHeight];
    n.box = { x: n.x, y: n.y + n.height / 2 - h / 2, width: w, height: h };
  }
  return g;
}

/** Where the segment from the centre of `r` towards `p` leaves the rectangle `r` (centre x, y). */
function border(r, p) {
  const dx = p.x - r.x;
  const dy = p.y - r.y;
  const [w, h] = [r.width / 2, r.height / 2];
  if (dx === 0 && dy === 0) return { x: r.x, y: r.y };
  if (Math.abs(dy) * w > Math.abs(dx) * h) {
    const sy = dy < 0 ? -h : h;
    return { x: r.x + (sy * dx) / dy, y: r.y + sy };
  }
  const sx = dx < 0 ? -w : w;
  return { x: r.x + sx, y: r.y + (sx * dy) / dx };
}

function drawNode(svg, g, id, current) {
  const n = g.node(id);
  const b = n.box;
  const x = b.x - b.width / 2;
  const y = b.y - b.height / 2;
  if (n.start) {
    svg.append(el('circle', { cx: b.x, cy: b.y, r: 6, class: 'start' }));
    return;
  }
  const isCurrent = !n.pseudo && (id === current || (typeof current === 'string' && current.startsWith(`${id}.`)));
  const cls = ['node', n.pseudo ? 'pseudo' : '', n.state?.type === 'final' ? 'final' : '', isCurrent ? 'current' : ''].filter(Boolean).join(' ');
  const grp = el('g', { class: cls, 'data-state': id, ...(isCurrent ? { 'aria-current': 'true' } : {}) });
  grp.append(el('rect', { x, y, width: b.width, height: b.height, rx: n.pseudo ? 13 : 8 }));
  if (n.state?.type === 'final') grp.append(el('rect', { x: x + 3, y: y + 3, width: b.width - 6, height: b.height - 6, rx: 6, class: 'inner' }));
  grp.append(el('text', { x: b.x, y: b.y + 4, 'text-anchor': 'middle' }, n.label));
  svg.append(grp);
}

/** An edge between two states: dagre's route, its ends moved onto the states' rectangles. */
function drawEdge(svg, g, e) {
  const pts = g.edge(e).points.map((p) => ({ ...p }));
  const last = pts.length - 1;
  pts[0] = border(g.node(e.v).box, pts[1] ?? pts[last]);
  pts[last] = border(g.node(e.w).box, pts[last - 1] ?? pts[0]);
  const d = `M ${pts[0].x} ${pts[0].y} ` + pts.slice(1).map((p) => `L ${p.x} ${p.y}`).join(' ');
  svg.append(el('path', { d, class: 'edge', 'data-edge': `${e.v}→${e.w}`, 'marker-end': 'url(#arrow)' }));
}

/** A state's self-loop: an arc on top of its rectangle, into it. */
function drawLoop(svg, g, id) {
  const n = g.node(id);
  if (!n.loop) return;
  const top = n.box.y - n.box.height / 2;
  const x = n.box.x;
  const d = `M ${x - 12} ${top} C ${x - 20} ${top - LOOP_H * 1.3}, ${x + 20} ${top - LOOP_H * 1.3}, ${x + 12} ${top}`;
  svg.append(el('path', { d, class: 'edge loop', 'data-edge': `${id}→${id}`, 'marker-end': 'url(#arrow)' }));
}

/** Write an edge's label lines into `text` (the full list as its tooltip when some were left out). */
function labelText(t, lines, all, x) {
  // An SVG <title> is the element's tooltip and accessible name.
  if (lines.length < all.length) t.append(el('title', {}, all.join('\n')));
  lines.forEach((line, i) => t.append(el('tspan', { x, dy: i === 0 ? 0 : LINE_H, class: /^\+\d+ more$/.test(line) ? 'more' : undefined }, line)));
  return t;
}

/**
 * An edge's label, its events one a line (at most three), where dagre placed it (dagre gives each
 * label its own box, so two never overlap); drawn after every path, over a halo, so no line runs
 * through its text. A self-loop's label sits above its arc, in the box its state reserved.
 */
function drawLabel(svg, g, e) {
  const edge = g.edge(e);
  if (edge.lines.length === 0) return;
  const t = el('text', { x: edge.x, y: edge.y - edge.height / 2 + 10, 'text-anchor': 'middle', class: 'edge-label', 'data-edge': `${e.v}→${e.w}`, 'data-events': edge.all.length });
  svg.append(labelText(t, edge.lines, edge.all, edge.x));
}

function drawLoopLabel(svg, g, id) {
  const n = g.node(id);
  if (!n.loop || n.loop.lines.length === 0) return;
  const y = n.y - n.height / 2 + 10;
  const t = el('text', { x: n.x, y, 'text-anchor': 'middle', class: 'edge-label', 'data-edge': `${id}→${id}`, 'data-events': n.loop.all.length });
  svg.append(labelText(t, n.loop.lines, n.loop.all, n.x));
}

/** The box around every node, edge point and label (dagre's graph size can leave labels outside). */
function bounds(g) {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  const box = (x, y, w, h) => { x0 = Math.min(x0, x - w / 2); y0 = Math.min(y0, y - h / 2); x1 = Math.max(x1, x + w / 2); y1 = Math.max(y1, y + h / 2); };
  for (const id of g.nodes()) { const n = g.node(id); box(n.x, n.y, n.width, n.height); }
  for (const e of g.edges()) {
    const edge = g.edge(e);
    for (const p of edge.points) box(p.x, p.y, 0, 0);
    if (edge.lines?.length) box(edge.x, edge.y, edge.width, edge.height);
  }
  const pad = 8;
  return { x: x0 - pad, y: y0 - pad, width: x1 - x0 + 2 * pad, height: y1 - y0 + 2 * pad };
}

const cache = new Map();

/** Draw `machine` into `container` with `current` (a state value) highlighted. */
export function drawMachine(container, machine, current) {
  let g = cache.get(machine.id);
  if (!g) {
    g = layout(machine);
    cache.set(machine.id, g);
  }
  const b = bounds(g);
  const svg = el('svg', { viewBox: `${Math.floor(b.x)} ${Math.floor(b.y)} ${Math.ceil(b.width)} ${Math.ceil(b.height)}`, width: Math.ceil(b.width), height: Math.ceil(b.height), role: 'img', 'aria-label': `${machine.id} state diagram`, 'data-machine': machine.id });
  const defs = el('defs');
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
  marker.append(el('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }));
  defs.append(marker);
  svg.append(defs);
  for (const e of g.edges()) drawEdge(svg, g, e);
  for (const id of g.nodes()) drawLoop(svg, g, id);
  for (const e of g.edges()) drawLabel(svg, g, e);
  for (const id of g.nodes()) drawLoopLabel(svg, g, id);
  const stateValue = typeof current === 'string' ? current : current && typeof current === 'object' ? flatten(current) : null;
  for (const id of g.nodes()) drawNode(svg, g, id, stateValue);
  container.replaceChildren(svg);
}

/** `{a: 'b'}` → `a.b` (the first region of a nested or parallel state value). */
function flatten(value) {
  const [k, v] = Object.entries(value)[0] ?? [];
  if (k === undefined) return null;
  return typeof v === 'string' ? `${k}.${v}` : `${k}.${flatten(v)}`;
}
