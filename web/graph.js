// Baton's dashboard: an execution's graph, drawn by layer (its `layers`, left to right),
// coloured by status, with the definition's edges. A layer of more than GROUP_OVER steps
// (a wide fan-out of distinct steps) is one node, "N steps, K done", until clicked open;
// a for_each step is one node with its instances' count, "730/1000 done"; past MAX_DRAWN
// nodes, a table of the layers' counts instead. Pending steps are dashed; a step that
// could run but waits for something else (a pool's slot, a breaker, a worker, the
// workflow's concurrency limit, a pause) is drawn as blocked, with the reason.
'use strict';

const GROUP_OVER = 40;
const MAX_DRAWN = 5000;
let opened = {id: '', layers: new Set()};  // the layers opened in the execution shown
// The latest instance counts of for_each steps ("execution\nstep" -> {done, total}), from
// their step.progress events (the event log's and the live feed's).
const fanProgress = new Map();

function noteFanProgress(executionId, event) {
  if (!event || event.type !== 'step.progress' || !event.data || !event.data.total) return;
  fanProgress.set(executionId + '\n' + event.step_id, {done: event.data.done, total: event.data.total});
}

function dependsOn(step) {
  const d = step && step.depends_on;
  if (!d) return [];
  return Array.isArray(d) ? d : [d];
}

function groupStatus(statuses) {
  if (statuses.some((x) => x === 'failed' || x === 'timed_out')) return 'failed';
  if (statuses.some((x) => x === 'running' || x === 'dispatched')) return 'running';
  if (statuses.every((x) => TERMINAL_STEP.has(x))) return 'completed';
  if (statuses.some((x) => x === 'ready' || x === 'waiting_retry')) return 'ready';
  return 'pending';
}

// The kinds of "why" that mean blocked by something other than the steps before.
const BLOCKED_KINDS = new Set(['max_running', 'concurrency', 'pool', 'cache', 'paused', 'max_parallel',
                               'capacity', 'breaker']);

function stepNode(e, definition, id, x, status, blockedBy, instances) {
  const def = definition && (definition.steps || []).find((s) => s.id === x);
  const short = x.length > 22 ? x.slice(0, 21) + '…' : x;
  if (def && def.for_each) {
    const fan = instances || fanProgress.get(id + '\n' + x);
    const counted = status === 'completed' ? 'all done' : fan ? fan.done + '/' + fan.total + ' done' : 'for each';
    return {key: x, label: (short.length > 12 ? short.slice(0, 11) + '…' : short) + ' · ' + counted,
            status, step: x, fan: true, blocked: blockedBy,
            title: x + ': ' + status + ', one instance per item (' + counted + ')' + (blockedBy ? '; ' + blockedBy : '')};
  }
  return {key: x, label: short, status, step: x, blocked: blockedBy,
          title: x + ': ' + status + (blockedBy ? '; ' + blockedBy : '')};
}

// `why`: GET .../why's answer (or null): what each open step waits for.
function dag(e, definition, id, why) {
  if (opened.id !== id) opened = {id, layers: new Set()};
  const status = new Map(e.steps.map((s) => [s.id, s.status]));
  const blocked = new Map();
  for (const w of (why && why.steps) || []) if (BLOCKED_KINDS.has(w.kind)) blocked.set(w.step_id, w.reason);
  for (const s of e.steps) if (s.waiting) blocked.set(s.id, s.waiting);
  const instances = new Map();  // for_each steps running: {done, total, started, running}
  for (const w of (why && why.steps) || []) if (w.instances) instances.set(w.step_id, w.instances);
  // Nodes by column: a step, or a whole layer.
  const nodeOf = new Map();  // step id -> node key
  const columns = e.layers.map((l) => {
    if (l.steps.length > GROUP_OVER && !opened.layers.has(l.index)) {
      const key = 'layer:' + l.index;
      const sts = l.steps.map((x) => status.get(x) || 'pending');
      const done = sts.filter((x) => TERMINAL_STEP.has(x)).length;
      l.steps.forEach((x) => nodeOf.set(x, key));
      return [{key, label: l.steps.length + ' steps, ' + done + ' done', status: groupStatus(sts),
               layer: l.index, title: 'layer ' + l.index + ': ' + l.steps.length + ' steps; click to open'}];
    }
    return l.steps.map((x) => {
      nodeOf.set(x, x);
      return stepNode(e, definition, id, x, status.get(x) || 'pending', blocked.get(x), instances.get(x));
    });
  });
  const drawn = columns.reduce((n, c) => n + c.length, 0);
  if (drawn > MAX_DRAWN) {
    return table('dag-layers', ['Layer', 'Steps', 'Done'], e.layers.map((l) => el('tr', {},
      el('td', {}, l.index), el('td', {}, l.steps.length),
      el('td', {}, l.steps.filter((x) => TERMINAL_STEP.has(status.get(x))).length))));
  }
  const W = 170, H = 26, GX = 60, GY = 12, PAD = 10;
  const at = new Map();
  let rows = 0;
  columns.forEach((nodes, col) => {
    nodes.forEach((n, row) => at.set(n.key, {x: PAD + col * (W + GX), y: PAD + row * (H + GY), n}));
    rows = Math.max(rows, nodes.length);
  });
  const svg = svgEl('svg', {width: Math.max(PAD * 2 + columns.length * (W + GX) - GX, 0),
                            height: Math.max(PAD * 2 + rows * (H + GY) - GY, 0)});
  // Edges between nodes, once each (a grouped layer's many edges are one).
  const edges = new Set();
  for (const s of (definition && definition.steps) || []) {
    const to = nodeOf.get(s.id);
    for (const up of dependsOn(s)) {
      const from = nodeOf.get(up);
      if (from && to && from !== to) edges.add(from + '\u0000' + to);
    }
  }
  const parts = [];
  for (const edge of edges) {
    const [from, to] = edge.split('\u0000');
    const q = at.get(from), p = at.get(to);
    const x1 = q.x + W, y1 = q.y + H / 2, x2 = p.x, y2 = p.y + H / 2;
    parts.push(svgEl('path', {d: `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}`}));
  }
  for (const {x, y, n} of at.values()) {
    const g = svgEl('g', {class: 'node ' + n.status + (n.step ? '' : ' group') + (n.fan ? ' fan' : '') +
                                 (n.blocked ? ' blocked' : ''),
                          'data-status': n.status});
    if (n.step) {
      g.setAttribute('data-step', n.step);
      g.addEventListener('click', () => { location.hash = executionLink(id, n.step); });
    } else {
      g.setAttribute('data-layer', n.layer);
      g.addEventListener('click', () => { opened.layers.add(n.layer); route(); });
    }
    const label = svgEl('text', {x: x + 8, y: y + 17});
    label.textContent = n.label;
    const title = svgEl('title');
    title.textContent = n.title + (n.fan ? '; click for every instance' : '');
    g.append(svgEl('rect', {x, y, width: W, height: H}), label, title);
    parts.push(g);
  }
  svg.append(...parts);
  return el('div', {class: 'dag', id: 'dag'}, svg);
}

// A for_each step's instances, one square each, by state: finished, running (from the
// engine's `why`), not started; every one finished once the step completed. The step's
// output holds the finished instances' outputs in item order.
function instanceStrip(step, instances) {
  // Known while the step runs (the engine's) and once it completed (its output); a
  // failed run's error names the item that failed (details.item_index).
  if (!instances && step.status !== 'completed') return null;
  const total = instances ? instances.total : Array.isArray(step.output) ? step.output.length : 0;
  if (!total) return null;
  const running = new Set(instances ? instances.running : []);
  const started = instances ? instances.started : total;
  const squares = [];
  let done = 0;
  for (let i = 0; i < total; ++i) {
    const state = step.status === 'completed' ? 'completed'
      : running.has(i) ? 'running' : i < started ? 'completed' : 'pending';
    if (state === 'completed') ++done;
    squares.push(el('span', {class: 'instance ' + state, title: 'item ' + i + ': ' + state, 'data-item': i}));
  }
  return [el('h2', {}, 'Instances ', el('span', {class: 'muted'}, done + ' of ' + total + ' done' +
                                                  (running.size ? ', ' + running.size + ' running' : ''))),
          el('div', {class: 'instances', id: 'instances'}, squares)];
}
