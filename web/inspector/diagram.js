// The state diagram of one machine (behaviour.md §13.5), drawn from GET /inspect/machines: the
// layout (node positions, edge routes, label places) is computed by dagre, the graph-layout
// library served from the package's node_modules; this file only turns its result into SVG.

import dagre from '/inspect/assets/vendor/dagre.js';

const SVG = 'http://www.w3.org/2000/svg';
const ANY = '(any state)';
const START = '(start)';
const CHAR_W = 7;

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
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

/** Lay out a machine with dagre; returns the graph with positions. */
function layout(machine) {
  const g = new dagre.graphlib.Graph({ multigraph: true, compound: true });
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 56, edgesep: 12, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const s of machine.states) g.setNode(s.id, { label: s.id.split('.').pop(), width: Math.max(64, s.id.length * CHAR_W + 24), height: 32, state: s });
  for (const s of machine.states) if (s.parent) g.setParent(s.id, s.parent);
  const edges = edgesOf(machine);
  if (edges.some((e) => e.from === ANY)) g.setNode(ANY, { label: 'any state', width: 80, height: 26, pseudo: true });
  if (machine.initial) g.setNode(START, { label: '', width: 12, height: 12, pseudo: true, start: true });
  edges.forEach((e, i) => {
    const text = e.labels.join('\n');
    const lines = e.labels.length;
    g.setEdge(e.from, e.to, { text, width: Math.max(...e.labels.map((l) => l.length), 0) * 5.6, height: lines * 13, labelpos: 'c' }, `e${i}`);
  });
  dagre.layout(g);
  return g;
}

function drawNode(svg, g, id, current) {
  const n = g.node(id);
  const x = n.x - n.width / 2;
  const y = n.y - n.height / 2;
  if (n.start) {
    svg.append(el('circle', { cx: n.x, cy: n.y, r: 6, class: 'start' }));
    return;
  }
  const isCurrent = !n.pseudo && (id === current || (typeof current === 'string' && current.startsWith(`${id}.`)));
  const cls = ['node', n.pseudo ? 'pseudo' : '', n.state?.type === 'final' ? 'final' : '', isCurrent ? 'current' : ''].filter(Boolean).join(' ');
  const grp = el('g', { class: cls, 'data-state': id, ...(isCurrent ? { 'aria-current': 'true' } : {}) });
  grp.append(el('rect', { x, y, width: n.width, height: n.height, rx: n.pseudo ? 13 : 8 }));
  if (n.state?.type === 'final') grp.append(el('rect', { x: x + 3, y: y + 3, width: n.width - 6, height: n.height - 6, rx: 6, class: 'inner' }));
  grp.append(el('text', { x: n.x, y: n.y + 4, 'text-anchor': 'middle' }, n.label));
  svg.append(grp);
}

function drawEdge(svg, g, e) {
  const edge = g.edge(e);
  const pts = edge.points;
  // dagre routes every edge, self-loops included (around the right side of their node).
  const d = `M ${pts[0].x} ${pts[0].y} ` + pts.slice(1).map((p) => `L ${p.x} ${p.y}`).join(' ');
  svg.append(el('path', { d, class: e.v === e.w ? 'edge loop' : 'edge', 'marker-end': 'url(#arrow)' }));
}

/**
 * An edge's label, one per edge with its events one a line, where dagre placed it (dagre gives
 * each label its own box, so two never overlap); drawn after every path, over a halo, so no line
 * runs through its text.
 */
function drawLabel(svg, g, e) {
  const edge = g.edge(e);
  if (!edge.text) return;
  const t = el('text', { x: edge.x, y: edge.y - edge.height / 2 + 10, 'text-anchor': 'middle', class: 'edge-label', 'data-edge': `${e.v}→${e.w}` });
  edge.text.split('\n').forEach((line, i) => t.append(el('tspan', { x: edge.x, dy: i === 0 ? 0 : 13 }, line)));
  svg.append(t);
}

/** The box around every node, edge point and label (dagre's graph size can leave labels outside). */
function bounds(g) {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  const box = (x, y, w, h) => { x0 = Math.min(x0, x - w / 2); y0 = Math.min(y0, y - h / 2); x1 = Math.max(x1, x + w / 2); y1 = Math.max(y1, y + h / 2); };
  for (const id of g.nodes()) { const n = g.node(id); box(n.x, n.y, n.width, n.height); }
  for (const e of g.edges()) {
    const edge = g.edge(e);
    for (const p of edge.points) box(p.x, p.y, 0, 0);
    if (edge.text) box(edge.x, edge.y, edge.width, edge.height);
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
  for (const e of g.edges()) drawLabel(svg, g, e);
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
