// Baton's dashboard: workflows — the catalog with its schedules, webhooks and triggers;
// one workflow's versions with a diff between any two, and a start form built from its
// declared `inputs`.
'use strict';

async function renderWorkflows(gen) {
  stopFollowing();
  const [list, schedules, hooks, triggers] = await Promise.all([
    api('GET', '/api/v1/workflows'),
    api('GET', '/api/v1/schedules').catch(() => ({schedules: []})),
    api('GET', '/api/v1/hooks').catch(() => ({hooks: []})),
    api('GET', '/api/v1/triggers').catch(() => ({triggers: []})),
  ]);
  const workflowLink = (name) => el('a', {href: '#/workflows/' + encodeURIComponent(name)}, name);
  const version = (v) => (v ? 'v' + v : 'latest');
  show(gen, el('h1', {}, 'Workflows'),
       table('workflows', ['Workflow', 'Version', 'Created'], list.workflows.map((w) => el('tr', {'data-name': w.name},
         el('td', {}, workflowLink(w.name)), el('td', {}, 'v' + w.version), el('td', {}, when(w.created_at)))),
         'No workflows yet (baton workflow create FILE).'),
       el('h2', {}, 'Schedules'),
       table('schedules', ['Schedule', 'Workflow', 'Cron', 'Next fire', 'Last fire', 'Overlap'],
         schedules.schedules.map((s) => el('tr', {'data-schedule': s.id},
           el('td', {}, s.name || s.id), el('td', {}, workflowLink(s.workflow), ' ' + version(s.version)),
           el('td', {class: 'mono'}, s.cron + (s.timezone && s.timezone !== 'UTC' ? ' (' + s.timezone + ')' : '')),
           el('td', {class: 'next-fire'}, when(s.next_fire_at)),
           el('td', {}, when(s.last_fire_at), s.last_execution_id
             ? [' ', el('a', {href: executionLink(s.last_execution_id), class: 'mono'}, s.last_execution_id)] : null),
           el('td', {}, s.overlap))), 'No schedules (baton schedule create).'),
       el('h2', {}, 'Webhooks'),
       table('hooks', ['Hook', 'Workflow', 'URL', 'Created'], hooks.hooks.map((h) => el('tr', {},
         el('td', {}, h.name), el('td', {}, workflowLink(h.workflow), ' ' + version(h.version)),
         el('td', {class: 'mono'}, h.url), el('td', {}, when(h.created_at)))), 'No webhooks.'),
       el('h2', {}, 'Triggers'),
       table('triggers', ['Trigger', 'On', 'Starts', 'Created'], triggers.triggers.map((t) => el('tr', {},
         el('td', {}, t.name || t.id), el('td', {class: 'mono'}, t.source + ': ' + (t.on || []).join(', ')),
         el('td', {}, workflowLink(t.workflow), ' ' + version(t.version)), el('td', {}, when(t.created_at)))),
         'No triggers.'));
}

// A workflow's latest version, its versions with a diff, and a form that starts it.
async function renderWorkflow(name, params, gen) {
  stopFollowing();
  const path = '/api/v1/workflows/' + encodeURIComponent(name);
  const [w, versions] = await Promise.all([api('GET', path), api('GET', path + '/versions')]);
  const numbers = versions.versions.map((v) => v.version);
  const form = startForm(name, (w.definition && w.definition.inputs) || {});
  const from = Number(params.get('from')) || (numbers.length > 1 ? numbers[1] : 0);
  const to = Number(params.get('to')) || w.version;
  let diff = null;
  if (numbers.length > 1 && from && to) {
    const [a, b] = await Promise.all([workflowDefinition(name, from), workflowDefinition(name, to)]);
    diff = diffView(JSON.stringify(a, null, 2), JSON.stringify(b, null, 2));
  }
  const pick = (which, value) => el('select', {name: which, onchange: (ev) => {
    const p = new URLSearchParams({from: String(from), to: String(to)});
    p.set(which, ev.target.value);
    location.hash = '#/workflows/' + encodeURIComponent(name) + '?' + p;
  }}, numbers.map((n) => el('option', {value: n, selected: n === value}, 'v' + n)));
  show(gen, el('p', {}, el('a', {href: '#/workflows'}, '← Workflows')),
       el('h1', {}, name + ' v' + w.version),
       el('p', {}, el('a', {href: '#/executions?workflow=' + encodeURIComponent(name)}, 'Its executions')),
       form ? [el('h2', {}, 'Start'), form] : null,
       el('h2', {}, 'Versions'),
       table('versions', ['Version', 'Created'], versions.versions.map((v) => el('tr', {},
         el('td', {}, 'v' + v.version), el('td', {}, when(v.created_at))))),
       diff ? [el('h2', {}, 'Changes'), el('p', {class: 'diff-pick'}, 'From ', pick('from', from), ' to ', pick('to', to)), diff]
         : null,
       el('h2', {}, 'Definition'), json(w.definition));
}

// The start form: a field per declared input, typed, with its default as a placeholder.
// None for a read-only token.
function startForm(name, inputs) {
  if (!canWrite()) return null;
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
    input.id = 'in-' + key;
    fields.push(el('label', {for: 'in-' + key}, key), input);
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
  return el('form', {class: 'start', id: 'start', onsubmit: async (ev) => {
    ev.preventDefault();
    const input = {};
    try {
      Object.keys(inputs).forEach((key, i) => {
        const v = readers[i]();
        if (v !== undefined) input[key] = v;
      });
      const started = await api('POST', '/api/v1/executions', {workflow: name, input});
      location.hash = executionLink(started.id);
    } catch (e) {
      note.textContent = e.message;
    }
  }}, fields, el('button', {class: 'primary', type: 'submit'}, 'Start'), note);
}

// Lines removed (-) and added (+) between two texts, by their longest common
// subsequence, with three lines of context around each change.
const DIFF_MAX_LINES = 1500;
function diffView(before, after) {
  const a = before.split('\n'), b = after.split('\n');
  if (a.length > DIFF_MAX_LINES || b.length > DIFF_MAX_LINES) {
    return el('p', {class: 'muted', id: 'diff'}, 'Too large to compare here (over ' + DIFF_MAX_LINES + ' lines).');
  }
  const n = a.length, m = b.length;
  const lcs = new Uint16Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; --i) {
    for (let j = m - 1; j >= 0; --j) {
      lcs[i * (m + 1) + j] = a[i] === b[j] ? lcs[(i + 1) * (m + 1) + j + 1] + 1
        : Math.max(lcs[(i + 1) * (m + 1) + j], lcs[i * (m + 1) + j + 1]);
    }
  }
  const lines = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { lines.push([' ', a[i]]); ++i; ++j; }
    else if (i < n && (j === m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1])) lines.push(['-', a[i++]]);
    else lines.push(['+', b[j++]]);
  }
  const changed = lines.map((l, k) => l[0] !== ' ' ? k : -1).filter((k) => k >= 0);
  if (!changed.length) return el('p', {class: 'muted', id: 'diff'}, 'The two versions are the same.');
  const near = new Set();
  for (const k of changed) for (let d = -3; d <= 3; ++d) near.add(k + d);
  const out = [];
  lines.forEach(([mark, text], k) => {
    if (!near.has(k)) {
      if (near.has(k - 1)) out.push(el('div', {class: 'gap'}, '…'));
      return;
    }
    out.push(el('div', {class: mark === '+' ? 'added' : mark === '-' ? 'removed' : ''}, mark + ' ' + text));
  });
  return el('div', {class: 'diff mono', id: 'diff'}, out);
}
