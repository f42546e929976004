// Baton's dashboard: the executions list, its filters (kept in the URL), its counts by
// status, and bulk actions over the current filter.
'use strict';

let lastList = null;     // the query of the executions list shown last
let bulkMessage = null;  // what the last bulk action did, shown once on the list

// The list's query in the API's terms (since/until as ISO 8601).
function listFilter(params) {
  const f = {};
  for (const k of ['status', 'workflow', 'q']) if (params.get(k)) f[k] = params.get(k);
  for (const k of ['since', 'until']) if (params.get(k)) f[k] = new Date(params.get(k)).toISOString();
  return f;
}

async function renderExecutions(params, gen) {
  const status = params.get('status') || '';
  const workflow = params.get('workflow') || '';
  const cursor = params.get('cursor') || '';
  const filter = listFilter(params);
  const q = new URLSearchParams(Object.assign({limit: String(PAGE)}, filter));
  if (cursor) q.set('cursor', cursor);
  // The counts by status of the same filter without its status.
  const cq = new URLSearchParams(filter);
  cq.delete('status');
  const [page, counts] = await Promise.all([
    api('GET', '/api/v1/executions?' + q),
    api('GET', '/api/v1/executions/counts?' + cq).catch(() => null),
  ]);

  const statusSelect = el('select', {name: 'status'}, el('option', {value: ''}, 'any'),
                          STATUSES.map((s) => el('option', {value: s, selected: s === status}, s)));
  const workflowInput = el('input', {name: 'workflow', value: workflow, placeholder: 'any'});
  const textInput = el('input', {name: 'q', value: params.get('q') || '', placeholder: 'id, input or output text'});
  const sinceInput = el('input', {name: 'since', type: 'datetime-local', value: params.get('since') || ''});
  const untilInput = el('input', {name: 'until', type: 'datetime-local', value: params.get('until') || ''});
  const inputs = [textInput, statusSelect, workflowInput, sinceInput, untilInput];
  const filters = el('form', {class: 'filters', id: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const next = new URLSearchParams();
    for (const input of inputs) if (input.value.trim()) next.set(input.name, input.value.trim());
    location.hash = '#/executions' + (next.toString() ? '?' + next : '');
  }},
  el('label', {}, 'Search', textInput),
  el('label', {}, 'Status', statusSelect), el('label', {}, 'Workflow', workflowInput),
  el('label', {}, 'Created from', sinceInput), el('label', {}, 'until', untilInput),
  el('button', {type: 'submit'}, 'Filter'));

  const rows = page.executions.map((e) => el('tr', {class: 'clickable', 'data-id': e.id,
                                                    onclick: () => { location.hash = executionLink(e.id); }},
    el('td', {class: 'mono'}, el('a', {href: executionLink(e.id)}, e.id)),
    el('td', {}, e.workflow, el('span', {class: 'muted'}, ' v' + e.version)),
    el('td', {}, statusBadge(e.status)),
    el('td', {}, when(e.created_at)),
    el('td', {}, e.started_at && e.completed_at
      ? duration(new Date(e.completed_at) - new Date(e.started_at)) : ''),
    el('td', {class: 'error'}, e.error && e.error.message ? e.error.message : '')));
  const list = table('executions', ['Execution', 'Workflow', 'Status', 'Created', 'Duration', 'Error'],
                     rows, 'No executions match.');
  const pager = el('div', {class: 'pager'},
    cursor ? el('a', {href: '#/executions' + withParams(params, {cursor: ''})}, '← Newest') : null,
    page.next_cursor ? el('a', {id: 'older', href: '#/executions' + withParams(params, {cursor: page.next_cursor})},
                          'Older →') : null);
  const countRow = counts ? el('div', {class: 'counts', id: 'counts'},
    el('a', {href: '#/executions' + withParams(params, {status: '', cursor: ''}), 'data-status': 'all'},
       counts.total + ' in all'),
    STATUSES.filter((st) => counts.counts[st]).map((st) =>
      el('a', {href: '#/executions' + withParams(params, {status: st, cursor: ''}), 'data-status': st},
         statusBadge(st), ' ' + counts.counts[st]))) : null;
  // A live redraw of the same list keeps what is being typed into the filters.
  const before = document.getElementById('filters');
  if (before && lastList === params.toString()) {
    for (const input of inputs) {
      const typed = before.elements[input.name];
      if (typed) input.value = typed.value;
    }
  }
  const focused = before && before.contains(document.activeElement) ? document.activeElement.name : '';
  const message = bulkMessage;
  show(gen, el('h1', {}, 'Executions'), filters, countRow,
       canWrite() ? bulkActions(filter) : null,
       message ? el('p', {id: 'bulk-result', class: message.failed ? 'error' : 'notice'}, message.text) : null,
       list, pager);
  if (lastList !== params.toString()) bulkMessage = null;
  lastList = params.toString();
  if (focused && filters.elements[focused]) filters.elements[focused].focus();

  // Live: the first page follows the namespace's executions (types=: the server sends
  // no step events, which the list does not show and a busy server has many of).
  if (!cursor) {
    follow('namespace', '?types=execution.*', (e) => {
      if (!e || (typeof e.type === 'string' && e.type.startsWith('execution.'))) {
        soon(() => route());
      }
    });
  } else {
    stopFollowing();
  }
}

// Cancel, pause, resume or retry every execution the current filter matches: the server
// counts them first (a dry run), and the confirmation names that number.
function bulkActions(filter) {
  const verbs = {cancel: 'Cancel', retry: 'Retry', pause: 'Pause', resume: 'Resume'};
  const run = async (action) => {
    try {
      const dry = await api('POST', '/api/v1/executions/bulk', {action, filter, dry_run: true});
      if (dry.matched === 0) {
        bulkMessage = {text: 'No execution matching this filter can be ' + verbPast(action) + '.'};
        return route();
      }
      const n = dry.matched + (dry.truncated ? ' (the first 1,000 of more)' : '');
      if (!confirm(verbs[action] + ' ' + n + ' execution' + (dry.matched === 1 ? '' : 's') +
                   ' matching this filter?')) return;
      const done = await api('POST', '/api/v1/executions/bulk', {action, filter});
      bulkMessage = {failed: done.failed > 0,
                     text: verbPast(action) + ' ' + done.applied + ' of ' + done.matched +
                           (done.failed ? '; ' + done.failed + ' failed: ' +
                              done.failures.map((f) => f.id + ' (' + f.message + ')').join(', ') : '') + '.'};
    } catch (e) {
      bulkMessage = {failed: true, text: verbs[action] + ': ' + e.message};
    }
    route();
  };
  return el('div', {class: 'actions bulk', id: 'bulk'}, el('span', {class: 'muted'}, 'All matching: '),
    Object.entries(verbs).map(([action, label]) =>
      el('button', {type: 'button', 'data-bulk': action, class: action === 'cancel' ? 'danger' : '',
                    onclick: () => run(action)}, label + '…')));
}

function verbPast(action) {
  return {cancel: 'cancelled', retry: 'retried', pause: 'paused', resume: 'resumed'}[action];
}
