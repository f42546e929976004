// Baton's dashboard: plain JavaScript over the REST API and the live feed, no build step.
//
// Every value that comes from a workflow (names, inputs, outputs, errors, logs) reaches
// the page as text (textContent, never innerHTML), and the server's Content-Security-
// Policy runs no inline script: an output holding markup is shown, not run.
'use strict';

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'timed_out']);
const TERMINAL_STEP = new Set(['completed', 'failed', 'cancelled', 'timed_out', 'skipped']);
const STATUSES = ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled', 'timed_out'];
const PAGE = 50;

let session = null;  // GET /api/v1/session: {namespace, scopes, can_write}
let live = null;     // the WebSocket of the current view
let refreshTimer = 0;
let reconnectTimer = 0;
let generation = 0;  // of route() calls: see show()
let lastList = null;  // the query of the executions list shown last

// --- DOM ---------------------------------------------------------------------------

// el('a', {href: '#/x', class: 'c', onclick: f}, 'text', child, ...): children that are
// strings become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Replaces the view for the route() call `gen`, unless a newer one started meanwhile: a
// slower earlier render never draws over a newer view.
function show(gen, ...nodes) {
  if (gen !== generation) throw new Stale();
  const main = document.getElementById('main');
  main.replaceChildren(el('div', {}, ...nodes));
}

function statusBadge(s) {
  return el('span', {class: 'status ' + s, 'data-status': s}, s);
}

function json(value) {
  return el('pre', {}, value === undefined ? '' : JSON.stringify(value, null, 2));
}

function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}

function duration(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  const m = Math.floor(ms / 60000);
  return m + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

function progressBar(percent) {
  const bar = el('span');
  bar.style.width = Math.max(0, Math.min(100, percent || 0)) + '%';
  return el('span', {class: 'progress', title: (percent || 0) + '%'}, bar);
}

// --- API ---------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || ('HTTP ' + status));
    this.status = status;
  }
}

// Same-origin fetch with the session cookie; writes carry X-Baton-Csrf, which the server
// requires of cookie-authenticated writes (another site's page cannot add it).
async function api(method, path, body) {
  const headers = {'X-Baton-Csrf': '1'};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method, headers, credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (r.status === 401 && path !== '/api/v1/session') {
    session = null;
    renderLogin('Your session ended; give a token again.');
    throw new ApiError(401, data);
  }
  if (!r.ok) throw new ApiError(r.status, data);
  return data;
}

// The live feed of the current view (`key` names what it follows): `onChange` gets each
// event, and null once the feed is ready (anything that happened between the view's
// fetch and the feed's start is then fetched again). A view drawn again with the same
// key keeps its feed; another key closes it.
let liveKey = '';
let liveHandler = null;
function follow(key, query, onChange) {
  liveHandler = onChange;
  if (live && liveKey === key) return;
  stopFollowing();
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(scheme + '//' + location.host + '/api/v1/events' + query);
  ws.onmessage = (m) => {
    let e;
    try { e = JSON.parse(m.data); } catch (err) { return; }
    if (live !== ws || !liveHandler) return;
    liveHandler(e.type === 'ready' || e.type === 'gap' ? null : e);
  };
  // A feed that drops (a restart, a proxy's idle timeout) is opened again after a pause,
  // and the view read again: the view never goes stale without a sign.
  ws.onclose = () => {
    if (live !== ws) return;  // closed on purpose
    live = null;
    liveKey = '';
    clearTimeout(reconnectTimer);
    reconnectTimer = setTimeout(() => { reconnectTimer = 0; route(); }, 2000);
  };
  live = ws;
  liveKey = key;
}

function stopFollowing() {
  const ws = live;
  live = null;
  liveKey = '';
  if (ws) ws.close();
  clearTimeout(refreshTimer);
  refreshTimer = 0;
  clearTimeout(reconnectTimer);
  reconnectTimer = 0;
}

// Runs `fn` 300 ms after the first call since the last run: a burst of events redraws
// once, and a steady stream of them redraws about three times a second.
function soon(fn) {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = 0; fn(); }, 300);
}

// --- Views -------------------------------------------------------------------------

function renderLogin(message) {
  stopFollowing();
  document.getElementById('who').textContent = '';
  document.getElementById('logout').hidden = true;
  const input = el('input', {type: 'password', name: 'token', autocomplete: 'off',
                             placeholder: 'bt_…', 'aria-label': 'token'});
  const note = el('p', {class: 'error', id: 'login-error'}, message || '');
  const form = el('form', {class: 'login', id: 'login', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      session = await api('POST', '/api/v1/session', {token: input.value.trim()});
      input.value = '';
      start();
    } catch (e) {
      note.textContent = e.message;
    }
  }},
  el('h1', {}, 'Baton'),
  el('p', {class: 'muted'}, 'Give a token (baton token create, or the credentials file). ' +
     'It is exchanged for a session cookie; the page never keeps it.'),
  input, el('button', {class: 'primary', type: 'submit'}, 'Log in'), note);
  show(generation, form);
  input.focus();
}

function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/executions';
  const [path, query] = h.split('?');
  return {parts: path.split('/').filter(Boolean).map(decodeURIComponent),
          params: new URLSearchParams(query || '')};
}

async function renderExecutions(params, gen) {
  const status = params.get('status') || '';
  const workflow = params.get('workflow') || '';
  const cursor = params.get('cursor') || '';
  const since = params.get('since') || '';
  const until = params.get('until') || '';
  const text = params.get('q') || '';
  const q = new URLSearchParams({limit: String(PAGE)});
  if (text) q.set('q', text);
  if (status) q.set('status', status);
  if (workflow) q.set('workflow', workflow);
  if (since) q.set('since', new Date(since).toISOString());
  if (until) q.set('until', new Date(until).toISOString());
  if (cursor) q.set('cursor', cursor);
  // The counts by status of the same filter without its status.
  const cq = new URLSearchParams(q);
  ['limit', 'cursor', 'status'].forEach((k) => cq.delete(k));
  const [page, counts] = await Promise.all([
    api('GET', '/api/v1/executions?' + q),
    api('GET', '/api/v1/executions/counts?' + cq).catch(() => null),
  ]);

  const statusSelect = el('select', {name: 'status'}, el('option', {value: ''}, 'any'),
                          STATUSES.map((s) => el('option', {value: s, selected: s === status}, s)));
  const workflowInput = el('input', {name: 'workflow', value: workflow, placeholder: 'any'});
  const textInput = el('input', {name: 'q', value: text, placeholder: 'id, input or output text'});
  const sinceInput = el('input', {name: 'since', type: 'datetime-local', value: since});
  const untilInput = el('input', {name: 'until', type: 'datetime-local', value: until});
  const filters = el('form', {class: 'filters', id: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const next = new URLSearchParams();
    if (statusSelect.value) next.set('status', statusSelect.value);
    if (workflowInput.value.trim()) next.set('workflow', workflowInput.value.trim());
    if (textInput.value.trim()) next.set('q', textInput.value.trim());
    if (sinceInput.value) next.set('since', sinceInput.value);
    if (untilInput.value) next.set('until', untilInput.value);
    location.hash = '#/executions' + (next.toString() ? '?' + next : '');
  }},
  el('label', {}, 'Search', textInput),
  el('label', {}, 'Status', statusSelect), el('label', {}, 'Workflow', workflowInput),
  el('label', {}, 'Created from', sinceInput), el('label', {}, 'until', untilInput),
  el('button', {type: 'submit'}, 'Filter'));

  const rows = page.executions.map((e) => el('tr', {class: 'clickable', 'data-id': e.id,
                                                    onclick: () => { location.hash = '#/executions/' + encodeURIComponent(e.id); }},
    el('td', {class: 'mono'}, el('a', {href: '#/executions/' + encodeURIComponent(e.id)}, e.id)),
    el('td', {}, e.workflow, el('span', {class: 'muted'}, ' v' + e.version)),
    el('td', {}, statusBadge(e.status)),
    el('td', {}, when(e.created_at)),
    el('td', {}, e.started_at && e.completed_at
      ? duration(new Date(e.completed_at) - new Date(e.started_at)) : ''),
    el('td', {class: 'error'}, e.error && e.error.message ? e.error.message : '')));
  const table = el('table', {id: 'executions'},
    el('thead', {}, el('tr', {}, ['Execution', 'Workflow', 'Status', 'Created', 'Duration', 'Error']
      .map((h) => el('th', {}, h)))),
    el('tbody', {}, rows.length ? rows
      : el('tr', {}, el('td', {colspan: 6, class: 'muted'}, 'No executions match.'))));
  const pager = el('div', {class: 'pager'},
    cursor ? el('a', {href: '#/executions' + filtersOnly(params)}, '← Newest') : null,
    page.next_cursor ? el('a', {id: 'older', href: '#/executions?' + withCursor(params, page.next_cursor)},
                          'Older →') : null);
  const countRow = counts ? el('div', {class: 'counts', id: 'counts'},
    el('a', {href: '#/executions' + withStatus(params, ''), 'data-status': 'all'}, counts.total + ' in all'),
    STATUSES.filter((st) => counts.counts[st]).map((st) =>
      el('a', {href: '#/executions' + withStatus(params, st), 'data-status': st},
         statusBadge(st), ' ' + counts.counts[st]))) : null;
  // A live redraw of the same list keeps what is being typed into the filters.
  const before = document.getElementById('filters');
  if (before && lastList === params.toString()) {
    for (const input of [textInput, statusSelect, workflowInput, sinceInput, untilInput]) {
      const typed = before.elements[input.name];
      if (typed) input.value = typed.value;
    }
  }
  const focused = before && before.contains(document.activeElement) ? document.activeElement.name : '';
  show(gen, el('h1', {}, 'Executions'), filters, countRow, table, pager);
  lastList = params.toString();
  if (focused && filters.elements[focused]) filters.elements[focused].focus();

  // Live: the first page follows the namespace's feed.
  if (!cursor) {
    follow('namespace', '', (e) => {
      if (!e || (typeof e.type === 'string' && e.type.startsWith('execution.'))) {
        soon(() => route());
      }
    });
  } else {
    stopFollowing();
  }
}

function filtersOnly(params) {
  const p = new URLSearchParams(params);
  p.delete('cursor');
  return p.toString() ? '?' + p : '';
}

function withStatus(params, status) {
  const p = new URLSearchParams(params);
  p.delete('cursor');
  if (status) p.set('status', status);
  else p.delete('status');
  return p.toString() ? '?' + p : '';
}

function withCursor(params, cursor) {
  const p = new URLSearchParams(params);
  p.set('cursor', cursor);
  return p.toString();
}

async function renderExecution(id, params, gen) {
  const [e, why, events] = await Promise.all([
    api('GET', '/api/v1/executions/' + encodeURIComponent(id)),
    api('GET', '/api/v1/executions/' + encodeURIComponent(id) + '/why').catch(() => null),
    api('GET', '/api/v1/executions/' + encodeURIComponent(id) + '/events?limit=200'),
  ]);
  const selected = params.get('step') || '';
  const facts = el('dl', {class: 'grid'},
    el('dt', {}, 'Status'), el('dd', {}, statusBadge(e.status), ' ', progressBar(e.progress),
                                   el('span', {class: 'muted'}, ' ' + (e.progress || 0) + '%')),
    el('dt', {}, 'Workflow'), el('dd', {}, e.workflow + ' v' + e.version),
    el('dt', {}, 'Created'), el('dd', {}, when(e.created_at)),
    el('dt', {}, 'Started'), el('dd', {}, when(e.started_at)),
    el('dt', {}, 'Completed'), el('dd', {}, when(e.completed_at)),
    el('dt', {}, 'Duration'), el('dd', {}, duration(e.duration_ms)),
    e.parent_id ? [el('dt', {}, 'Parent'),
                   el('dd', {}, el('a', {href: '#/executions/' + encodeURIComponent(e.parent_id)}, e.parent_id),
                      e.parent_step ? ' (step ' + e.parent_step + ')' : '')] : null,
    e.children && e.children.length
      ? [el('dt', {}, 'Children'), el('dd', {}, e.children.map((c) => {
          const cid = typeof c === 'string' ? c : c.id;
          return el('a', {href: '#/executions/' + encodeURIComponent(cid), class: 'mono'}, cid, ' ');
        }))] : null);

  const actions = session && session.can_write ? el('div', {class: 'actions', id: 'actions'},
    !TERMINAL.has(e.status) ? el('button', {class: 'danger', id: 'cancel', onclick: () => act(id, 'cancel')}, 'Cancel') : null,
    e.status === 'running' ? el('button', {id: 'pause', onclick: () => act(id, 'pause')}, 'Pause') : null,
    e.status === 'paused' ? el('button', {id: 'resume', onclick: () => act(id, 'resume')}, 'Resume') : null,
    TERMINAL.has(e.status) && e.status !== 'completed'
      ? el('button', {id: 'retry', onclick: () => act(id, 'retry')}, 'Retry') : null) : null;

  // Long step lists are shown STEPS_SHOWN at a time.
  if (stepsShown.id !== id) stepsShown = {id, n: STEPS_SHOWN};
  const visible = e.steps.slice(0, stepsShown.n);
  const more = e.steps.length - visible.length;
  const steps = el('table', {id: 'steps'},
    el('thead', {}, el('tr', {}, ['Step', 'Status', 'Attempts', 'Started', 'Completed', 'Error']
      .map((h) => el('th', {}, h)))),
    el('tbody', {}, visible.map((s) => el('tr', {
      class: 'clickable' + (s.id === selected ? ' selected' : ''), 'data-step': s.id,
      onclick: () => { location.hash = '#/executions/' + encodeURIComponent(id) + '?step=' + encodeURIComponent(s.id); },
    },
    el('td', {class: 'mono'}, s.id), el('td', {}, statusBadge(s.status)), el('td', {}, s.attempts),
    el('td', {}, when(s.started_at)), el('td', {}, when(s.completed_at)),
    el('td', {class: 'error'}, s.error && s.error.message ? s.error.message : '')))));

  const step = e.steps.find((s) => s.id === selected);
  const panel = step ? el('div', {class: 'panel', id: 'step-panel'},
    el('h3', {}, 'Step ' + step.id),
    el('p', {}, statusBadge(step.status), ' ', step.attempts + ' attempt(s)'),
    step.error ? [el('h2', {}, 'Error'), json(step.error)] : null,
    step.stderr ? [el('h2', {}, 'Stderr ', el('button', {class: 'link', id: 'copy-stderr', type: 'button',
                                                         onclick: () => navigator.clipboard.writeText(step.stderr)}, 'copy')),
                   el('pre', {id: 'stderr'}, step.stderr)] : null,
    step.output !== null && step.output !== undefined ? [el('h2', {}, 'Output'), json(step.output)] : null,
    step.attempt_history && step.attempt_history.length
      ? [el('h2', {}, 'Attempts'), json(step.attempt_history)] : null,
    session && session.can_write && TERMINAL.has(e.status)
      ? el('p', {}, el('button', {id: 'retry-from', onclick: async () => {
          if (!confirm('Run ' + step.id + ' and every step after it again?')) return;
          await api('POST', '/api/v1/executions/' + encodeURIComponent(id) + '/retry', {from: step.id})
            .catch((err) => alert(err.message));
          route();
        }}, 'Retry from this step')) : null) : null;

  const waiting = why && why.steps && why.steps.length ? [
    el('h2', {}, 'Why is it waiting'),
    el('table', {id: 'why'}, el('tbody', {}, why.steps.map((w) => el('tr', {'data-step': w.step_id},
      el('td', {class: 'mono'}, w.step_id), el('td', {}, statusBadge(w.status)), el('td', {}, w.reason),
      el('td', {}, w.kind === 'signal' && session && session.can_write ? signalForm(id, w.signal) : null))))),
  ] : null;

  const log = el('table', {id: 'events'},
    el('thead', {}, el('tr', {}, ['#', 'Time', 'Type', 'Step', 'Data'].map((h) => el('th', {}, h)))),
    el('tbody', {}, events.events.map((ev) => el('tr', {},
      el('td', {}, ev.seq), el('td', {}, when(ev.time)), el('td', {class: 'mono'}, ev.type),
      el('td', {class: 'mono'}, ev.step_id || ''),
      el('td', {class: 'mono'}, ev.data && Object.keys(ev.data).length ? JSON.stringify(ev.data) : '')))));

  const definition = await workflowDefinition(e.workflow, e.version).catch(() => null);
  show(gen, el('p', {}, el('a', {href: '#/executions'}, '← Executions')),
       el('h1', {class: 'mono'}, id), facts, actions,
       el('h2', {}, 'Graph'), dag(e, definition, id),
       el('h2', {}, 'Input'), json(e.input),
       e.output !== null ? [el('h2', {}, 'Output'), json(e.output)] : null,
       e.error ? [el('h2', {}, 'Error'), el('pre', {class: 'error', id: 'execution-error'},
                                           JSON.stringify(e.error, null, 2))] : null,
       el('h2', {}, 'Timeline'), timeline(e, visible),
       el('h2', {}, 'Steps'), steps,
       more > 0 ? el('p', {}, el('button', {id: 'more-steps', onclick: () => { stepsShown.n += STEPS_SHOWN; route(); }},
                                 more + ' more steps: show ' + Math.min(more, STEPS_SHOWN) + ' more')) : null,
       panel, waiting,
       el('h2', {}, 'Events'), log);

  if (!TERMINAL.has(e.status)) {
    // From the last event read: none is missed between the fetch and the feed's start.
    const last = events.events.length ? events.events[events.events.length - 1].seq : 0;
    follow('execution ' + id, '?execution=' + encodeURIComponent(id) + '&since=' + last,
           () => soon(() => route()));
  } else {
    stopFollowing();
  }
}

// Definitions by "name@version": a version never changes, so one read each.
const definitions = new Map();
async function workflowDefinition(name, version) {
  const key = name + '@' + version;
  if (!definitions.has(key)) {
    const w = await api('GET', '/api/v1/workflows/' + encodeURIComponent(name) + '?version=' + version);
    definitions.set(key, w.definition || {});
  }
  return definitions.get(key);
}

function dependsOn(step) {
  const d = step && step.depends_on;
  if (!d) return [];
  return Array.isArray(d) ? d : [d];
}

// The execution's steps drawn by layer (its `layers`, left to right), coloured by
// status, with the definition's edges. A layer of more than GROUP_OVER steps (a wide
// fan-out) is drawn as one node, "N steps, K done", until it is clicked open; past
// MAX_DRAWN nodes, a table of the layers' counts instead.
const GROUP_OVER = 40;
const MAX_DRAWN = 5000;
let opened = {id: '', layers: new Set()};  // the layers opened in the execution shown
const STEPS_SHOWN = 200;
let stepsShown = {id: '', n: STEPS_SHOWN};  // how many steps the execution shown lists

function groupStatus(statuses) {
  if (statuses.some((x) => x === 'failed' || x === 'timed_out')) return 'failed';
  if (statuses.some((x) => x === 'running' || x === 'dispatched')) return 'running';
  if (statuses.every((x) => TERMINAL_STEP.has(x))) return 'completed';
  if (statuses.some((x) => x === 'ready' || x === 'waiting_retry')) return 'ready';
  return 'pending';
}

function dag(e, definition, id) {
  if (opened.id !== id) opened = {id, layers: new Set()};
  const status = new Map(e.steps.map((s) => [s.id, s.status]));
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
      const st = status.get(x) || 'pending';
      return {key: x, label: x.length > 22 ? x.slice(0, 21) + '…' : x, status: st, step: x, title: x + ': ' + st};
    });
  });
  const drawn = columns.reduce((n, c) => n + c.length, 0);
  if (drawn > MAX_DRAWN) {
    return el('table', {id: 'dag-layers'},
      el('thead', {}, el('tr', {}, ['Layer', 'Steps', 'Done'].map((h) => el('th', {}, h)))),
      el('tbody', {}, e.layers.map((l) => el('tr', {},
        el('td', {}, l.index), el('td', {}, l.steps.length),
        el('td', {}, l.steps.filter((x) => TERMINAL_STEP.has(status.get(x))).length)))));
  }
  const W = 170, H = 26, GX = 60, GY = 12, PAD = 10;
  const at = new Map();
  let rows = 0;
  columns.forEach((nodes, col) => {
    nodes.forEach((n, row) => at.set(n.key, {x: PAD + col * (W + GX), y: PAD + row * (H + GY), n}));
    rows = Math.max(rows, nodes.length);
  });
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('width', Math.max(PAD * 2 + columns.length * (W + GX) - GX, 0));
  svg.setAttribute('height', Math.max(PAD * 2 + rows * (H + GY) - GY, 0));
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
    const path = document.createElementNS(NS, 'path');
    const x1 = q.x + W, y1 = q.y + H / 2, x2 = p.x, y2 = p.y + H / 2;
    path.setAttribute('d', `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}`);
    parts.push(path);
  }
  for (const {x, y, n} of at.values()) {
    const g = document.createElementNS(NS, 'g');
    g.setAttribute('class', 'node ' + n.status + (n.step ? '' : ' group'));
    g.setAttribute('data-status', n.status);
    if (n.step) {
      g.setAttribute('data-step', n.step);
      g.addEventListener('click', () => {
        location.hash = '#/executions/' + encodeURIComponent(id) + '?step=' + encodeURIComponent(n.step);
      });
    } else {
      g.setAttribute('data-layer', n.layer);
      g.addEventListener('click', () => { opened.layers.add(n.layer); route(); });
    }
    const rect = document.createElementNS(NS, 'rect');
    rect.setAttribute('x', x);
    rect.setAttribute('y', y);
    rect.setAttribute('width', W);
    rect.setAttribute('height', H);
    const label = document.createElementNS(NS, 'text');
    label.setAttribute('x', x + 8);
    label.setAttribute('y', y + 17);
    label.textContent = n.label;
    const title = document.createElementNS(NS, 'title');
    title.textContent = n.title;
    g.append(rect, label, title);
    parts.push(g);
  }
  svg.append(...parts);
  return el('div', {class: 'dag', id: 'dag'}, svg);
}

// Each step's attempts as bars on the execution's time axis (from its start to its end,
// or to now while it runs): the gaps between a step's bars are its retry backoffs.
function timeline(e, visible) {
  const t0 = Date.parse(e.started_at || e.created_at);
  const t1 = e.completed_at ? Date.parse(e.completed_at) : Date.now();
  const span = Math.max(t1 - t0, 1);
  const rows = visible.filter((s) => s.started_at || (s.attempt_history || []).length).map((s) => {
    const attempts = (s.attempt_history || []).map((a) => ({from: a.started_at, to: a.completed_at, status: a.status}));
    const last = attempts.length ? attempts[attempts.length - 1] : null;
    if (s.started_at && (!last || last.from !== s.started_at)) {
      attempts.push({from: s.started_at, to: s.completed_at, status: s.status});
    }
    const track = el('div', {class: 'track'});
    for (const a of attempts) {
      const from = Date.parse(a.from), to = a.to ? Date.parse(a.to) : t1;
      const bar = el('span', {class: 'bar status ' + a.status,
                              title: a.status + ', ' + duration(Math.max(to - from, 0))});
      bar.style.left = (100 * (from - t0) / span) + '%';
      bar.style.width = Math.max(100 * (to - from) / span, 0.4) + '%';
      track.append(bar);
    }
    return el('div', {class: 'lane', 'data-step': s.id}, el('span', {class: 'mono lane-name'}, s.id), track);
  });
  return el('div', {class: 'timeline', id: 'timeline'},
            rows.length ? rows : el('p', {class: 'muted'}, 'No step has started yet.'),
            el('div', {class: 'axis muted'}, el('span', {}, when(e.started_at || e.created_at)),
               el('span', {}, duration(t1 - t0))));
}

async function renderWorkflows(gen) {
  stopFollowing();
  const list = await api('GET', '/api/v1/workflows');
  show(gen, el('h1', {}, 'Workflows'),
       el('table', {id: 'workflows'},
         el('thead', {}, el('tr', {}, ['Workflow', 'Version', 'Created'].map((h) => el('th', {}, h)))),
         el('tbody', {}, list.workflows.length ? list.workflows.map((w) => el('tr', {'data-name': w.name},
           el('td', {}, el('a', {href: '#/workflows/' + encodeURIComponent(w.name)}, w.name)),
           el('td', {}, 'v' + w.version), el('td', {}, when(w.created_at))))
           : el('tr', {}, el('td', {colspan: 3, class: 'muted'}, 'No workflows yet (baton workflow create FILE).')))));
}

// A workflow's latest version, and a form that starts it, built from its `inputs`.
async function renderWorkflow(name, gen) {
  stopFollowing();
  const w = await api('GET', '/api/v1/workflows/' + encodeURIComponent(name));
  const inputs = (w.definition && w.definition.inputs) || {};
  const fields = [];
  const readers = [];
  for (const [key, spec] of Object.entries(inputs)) {
    const type = (spec && spec.type) || 'string';
    const has = spec && Object.prototype.hasOwnProperty.call(spec, 'default');
    const shown = has ? (typeof spec.default === 'string' ? spec.default : JSON.stringify(spec.default)) : '';
    let input;
    if (type === 'boolean') {
      input = el('select', {name: key}, el('option', {value: ''}, has ? 'default' : '—'),
                 el('option', {value: 'true'}, 'true'), el('option', {value: 'false'}, 'false'));
    } else if (type === 'object' || type === 'array') {
      input = el('textarea', {name: key, rows: 3, placeholder: shown || type + ' (JSON)'});
    } else {
      input = el('input', {name: key, type: type === 'integer' || type === 'number' ? 'number' : 'text',
                           placeholder: shown});
    }
    fields.push(el('label', {for: 'in-' + key}, key), input);
    input.id = 'in-' + key;
    const hint = [type, has ? 'default ' + shown : 'required', spec && spec.description].filter(Boolean).join(' · ');
    fields.push(el('span', {class: 'hint'}, hint));
    readers.push(() => {
      const raw = input.value.trim();
      if (raw === '') return undefined;
      if (type === 'integer' || type === 'number') return Number(raw);
      if (type === 'boolean') return raw === 'true';
      if (type === 'object' || type === 'array') return JSON.parse(raw);
      return raw;
    });
  }
  const note = el('p', {class: 'error', id: 'start-error'});
  const canStart = session && session.can_write;
  const form = el('form', {class: 'start', id: 'start', onsubmit: async (ev) => {
    ev.preventDefault();
    const input = {};
    try {
      Object.keys(inputs).forEach((key, i) => {
        const v = readers[i]();
        if (v !== undefined) input[key] = v;
      });
      const started = await api('POST', '/api/v1/executions', {workflow: name, input});
      location.hash = '#/executions/' + encodeURIComponent(started.id);
    } catch (e) {
      note.textContent = e.message;
    }
  }}, fields, canStart ? el('button', {class: 'primary', type: 'submit'}, 'Start') : null);
  show(gen, el('p', {}, el('a', {href: '#/workflows'}, '← Workflows')),
       el('h1', {}, name + ' v' + w.version),
       el('p', {}, el('a', {href: '#/executions?workflow=' + encodeURIComponent(name)}, 'Its executions')),
       canStart ? el('h2', {}, 'Start') : null, canStart ? form : null, note,
       el('h2', {}, 'Definition'), json(w.definition));
}

async function renderWorkers(gen) {
  const [list, health, moved] = await Promise.all([
    api('GET', '/api/v1/workers'),
    api('GET', '/api/v1/coordinator/health').catch(() => null),
    api('GET', '/api/v1/reassignments?limit=20').catch(() => ({reassignments: []})),
  ]);
  const canWrite = session && session.can_write;
  show(gen, el('h1', {}, 'Workers'),
       el('table', {id: 'workers'},
         el('thead', {}, el('tr', {}, ['Worker', 'Status', 'Host', 'Load', 'Commands', 'Tags', 'Heartbeat', '']
           .map((h) => el('th', {}, h)))),
         el('tbody', {}, list.workers.length ? list.workers.map((w) => el('tr', {'data-worker': w.workerId},
           el('td', {class: 'mono'}, w.workerId), el('td', {}, statusBadge(w.status.toLowerCase())),
           el('td', {}, w.host), el('td', {}, w.currentLoad + ' / ' + w.capacity),
           el('td', {class: 'mono'}, (w.commands || []).join(', ')), el('td', {}, (w.tags || []).join(', ')),
           el('td', {}, when(w.lastHeartbeat)),
           el('td', {}, canWrite && !w.local && w.status === 'ONLINE'
             ? el('button', {class: 'drain', onclick: async () => {
                 if (!confirm('Drain worker ' + w.workerId + '? It takes no new work.')) return;
                 await api('DELETE', '/api/v1/workers/' + encodeURIComponent(w.workerId)).catch((e) => alert(e.message));
                 route();
               }}, 'Drain') : null)))
           : el('tr', {}, el('td', {colspan: 8, class: 'muted'}, 'No worker is connected.')))),
       health ? el('p', {class: 'muted', id: 'coordinator'},
         `${health.onlineWorkers} online, ${health.unhealthyWorkers} unhealthy, ${health.drainingWorkers} draining; ` +
         `${health.usedCapacity} of ${health.totalCapacity} slots in use; ${health.waitingAssignments} waiting for a worker; ` +
         `${health.reassignmentEvents} reassignments, ${health.heartbeatMisses} missed heartbeats`) : null,
       el('h2', {}, 'Recent reassignments'),
       el('table', {id: 'reassignments'},
         el('thead', {}, el('tr', {}, ['When', 'Step', 'From', 'To', 'Reason'].map((h) => el('th', {}, h)))),
         el('tbody', {}, moved.reassignments.length ? moved.reassignments.map((r) => el('tr', {},
           el('td', {}, when(r.reassignedAt)),
           el('td', {class: 'mono'}, el('a', {href: '#/executions/' + encodeURIComponent(r.executionId)}, r.executionId + '/' + r.stepId)),
           el('td', {class: 'mono'}, r.fromWorkerId), el('td', {class: 'mono'}, r.toWorkerId || ''), el('td', {}, r.reason)))
           : el('tr', {}, el('td', {colspan: 5, class: 'muted'}, 'None.')))));
  // Workers come and go without events: read again every two seconds while shown.
  stopFollowing();
  refreshTimer = setTimeout(() => { refreshTimer = 0; route(); }, 2000);
}

async function renderDeadLetters(gen) {
  stopFollowing();
  const [stats, page] = await Promise.all([
    api('GET', '/api/v1/dlq/stats?status=open'),
    api('GET', '/api/v1/dlq?status=open&limit=' + PAGE),
  ]);
  const canWrite = session && session.can_write;
  const groups = el('table', {id: 'dlq-groups'},
    el('thead', {}, el('tr', {}, ['Workflow', 'Step', 'Code', 'Count', 'Last failed'].map((h) => el('th', {}, h)))),
    el('tbody', {}, stats.by_fingerprint.map((g) => el('tr', {},
      el('td', {}, g.workflow), el('td', {class: 'mono'}, g.step_id), el('td', {class: 'mono'}, g.code),
      el('td', {}, g.count), el('td', {}, when(g.last_failed_at))))));
  const entries = el('table', {id: 'dlq'},
    el('thead', {}, el('tr', {}, ['#', 'Execution', 'Step', 'Error', 'Last failed', ''].map((h) => el('th', {}, h)))),
    el('tbody', {}, page.entries.length ? page.entries.map((d) => el('tr', {'data-entry': d.id},
      el('td', {}, d.id),
      el('td', {class: 'mono'}, el('a', {href: '#/executions/' + encodeURIComponent(d.execution_id)}, d.execution_id)),
      el('td', {class: 'mono'}, d.workflow + '/' + d.step_id),
      el('td', {class: 'error'}, d.error && d.error.message ? d.error.message : d.code),
      el('td', {}, when(d.last_failed_at)),
      el('td', {}, canWrite ? [
        el('button', {class: 'replay', onclick: async () => {
          await api('POST', '/api/v1/dlq/' + d.id + '/replay', {}).catch((e) => alert(e.message));
          route();
        }}, 'Replay'), ' ',
        el('button', {class: 'discard danger', onclick: async () => {
          if (!confirm('Discard dead letter ' + d.id + '?')) return;
          await api('DELETE', '/api/v1/dlq/' + d.id).catch((e) => alert(e.message));
          route();
        }}, 'Discard')] : null)))
      : el('tr', {}, el('td', {colspan: 6, class: 'muted'}, 'No open dead letters.'))));
  const bulk = canWrite && stats.total > 0 ? el('p', {}, el('button', {id: 'replay-all', onclick: async () => {
    if (!confirm('Replay all ' + stats.total + ' open dead letters, 10 a second?')) return;
    await api('POST', '/api/v1/dlq/replay', {filter: {}, per_second: 10}).catch((err) => alert(err.message));
    route();
  }}, 'Replay all ' + stats.total)) : null;
  show(gen, el('h1', {}, 'Dead letters'),
       el('p', {class: 'muted'}, stats.total + ' open, by error fingerprint:'), groups, bulk,
       el('h2', {}, 'Open entries'), entries);
}

// Sends signal `name` (an approval, say) with a JSON payload.
function signalForm(id, name) {
  const payload = el('input', {class: 'mono signal-payload', placeholder: '{"approved": true}', 'aria-label': 'payload'});
  return el('form', {class: 'signal', onsubmit: async (ev) => {
    ev.preventDefault();
    let body;
    try {
      body = payload.value.trim() ? JSON.parse(payload.value) : {};
    } catch (err) {
      return alert('The payload is not JSON: ' + err.message);
    }
    await api('POST', '/api/v1/executions/' + encodeURIComponent(id) + '/signals/' + encodeURIComponent(name), body)
      .catch((err) => alert(err.message));
    route();
  }}, payload, ' ', el('button', {type: 'submit'}, 'Send ' + name));
}

async function act(id, what) {
  if (what === 'cancel' && !confirm('Cancel execution ' + id + '?')) return;
  try {
    await api('POST', '/api/v1/executions/' + encodeURIComponent(id) + '/' + what, {});
  } catch (e) {
    alert(what + ': ' + e.message);
  }
  route();
}

class Stale extends Error {}

async function route() {
  if (!session) return renderLogin();
  const gen = ++generation;
  const {parts, params} = parseHash();
  try {
    if (parts[0] === 'executions' && parts[1]) return await renderExecution(parts[1], params, gen);
    if (parts[0] === 'workflows' && parts[1]) return await renderWorkflow(parts[1], gen);
    if (parts[0] === 'workflows') return await renderWorkflows(gen);
    if (parts[0] === 'workers') return await renderWorkers(gen);
    if (parts[0] === 'dlq') return await renderDeadLetters(gen);
    return await renderExecutions(params, gen);
  } catch (e) {
    if (e instanceof Stale || e.status === 401 || gen !== generation) return;
    show(gen, el('p', {class: 'error', id: 'view-error'}, e.message));
  }
}

async function start() {
  try {
    session = await api('GET', '/api/v1/session');
  } catch (e) {
    session = null;
  }
  const who = document.getElementById('who');
  const logout = document.getElementById('logout');
  if (!session) return renderLogin();
  who.textContent = session.namespace + (session.can_write ? '' : ' (read only)');
  logout.hidden = false;
  route();
}

document.getElementById('logout').addEventListener('click', async () => {
  await api('DELETE', '/api/v1/session').catch(() => {});
  session = null;
  renderLogin();
});
window.addEventListener('hashchange', () => route());
start();
