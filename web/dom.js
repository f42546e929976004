// Baton's dashboard, part 1 of its scripts (index.html loads them in order): building the
// page. Every value that comes from a workflow (names, inputs, outputs, errors, logs)
// reaches the page as text (textContent, never innerHTML), and the server's
// Content-Security-Policy runs no inline script: an output holding markup is shown, not run.
'use strict';

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'timed_out']);
const TERMINAL_STEP = new Set(['completed', 'failed', 'cancelled', 'timed_out', 'skipped']);
const STATUSES = ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled', 'timed_out'];
const PAGE = 50;
const SVG_NS = 'http://www.w3.org/2000/svg';

let session = null;  // GET /api/v1/session: {namespace, scopes, can_write}
let generation = 0;  // of route() calls: see show()

class Stale extends Error {}

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

// An SVG element with attributes (no children: callers append them).
function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// Replaces the view for the route() call `gen`, unless a newer one started meanwhile: a
// slower earlier render never draws over a newer view.
function show(gen, ...nodes) {
  if (gen !== generation) throw new Stale();
  const main = document.getElementById('main');
  main.replaceChildren(el('div', {}, ...nodes));
}

// A table with a header row; `empty` (text) fills it when there are no rows.
function table(id, headers, rows, empty) {
  return el('table', {id},
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, rows.length ? rows
      : el('tr', {}, el('td', {colspan: headers.length, class: 'muted'}, empty || 'None.'))));
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
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  if (ms < 3600000) {
    const m = Math.floor(ms / 60000);
    return m + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
  }
  return Math.floor(ms / 3600000) + ' h ' + Math.round((ms % 3600000) / 60000) + ' min';
}

// How long ago `iso` was, for ages (a heartbeat's).
function age(iso) {
  if (!iso) return '';
  const ms = Date.now() - Date.parse(iso);
  return isNaN(ms) ? '' : duration(Math.max(ms, 0)) + ' ago';
}

function progressBar(percent) {
  const bar = el('span');
  bar.style.width = Math.max(0, Math.min(100, percent || 0)) + '%';
  return el('span', {class: 'progress', title: (percent || 0) + '%'}, bar);
}

function executionLink(id, step) {
  return '#/executions/' + encodeURIComponent(id) + (step ? '?step=' + encodeURIComponent(step) : '');
}

// A query with some parameters replaced ('' removes one): "?a=1&b=2", or "" when empty.
function withParams(params, changes) {
  const p = new URLSearchParams(params);
  for (const [k, v] of Object.entries(changes)) {
    if (v) p.set(k, v);
    else p.delete(k);
  }
  return p.toString() ? '?' + p : '';
}

function canWrite() {
  return Boolean(session && session.can_write);
}
