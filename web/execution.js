// Baton's dashboard: one execution — its header and actions, graph, timeline, steps,
// the selected step's panel, why its open steps wait, and its event log.
'use strict';

const STEPS_SHOWN = 200;
let stepsShown = {id: '', n: STEPS_SHOWN};  // how many steps the execution shown lists
const EVENTS_SHOWN = 200;

async function renderExecution(id, params, gen) {
  const base = '/api/v1/executions/' + encodeURIComponent(id);
  const selected = params.get('step') || '';
  // The event log is read EVENTS_SHOWN at a time, from after the seq in ?events= (0: the first).
  const eventsAfter = Number(params.get('events')) || 0;
  const [e, why, events, assignments, letters] = await Promise.all([
    api('GET', base),
    api('GET', base + '/why').catch(() => null),
    api('GET', base + '/events?limit=' + EVENTS_SHOWN + '&after=' + eventsAfter),
    // The selected step's attempts as workers ran them (worker, checkpoint, moves).
    selected ? api('GET', '/api/v1/assignments?status=all&limit=1000&execution=' + encodeURIComponent(id))
      .catch(() => ({assignments: []})) : {assignments: []},
    // A step that failed for good left a dead letter with its resolved input.
    selected ? api('GET', '/api/v1/dlq?status=any&limit=1&execution=' + encodeURIComponent(id) + '&step=' + encodeURIComponent(selected))
      .catch(() => ({entries: []})) : {entries: []},
  ]);
  for (const ev of events.events) noteFanProgress(id, ev);
  const definition = await workflowDefinition(e.workflow, e.version).catch(() => null);

  const facts = el('dl', {class: 'grid'},
    el('dt', {}, 'Status'), el('dd', {}, statusBadge(e.status), ' ', progressBar(e.progress),
                                   el('span', {class: 'muted'}, ' ' + (e.progress || 0) + '%'),
                                   e.waiting ? el('span', {class: 'muted'}, ' — ' + e.waiting) : null),
    el('dt', {}, 'Workflow'), el('dd', {}, el('a', {href: '#/workflows/' + encodeURIComponent(e.workflow)}, e.workflow),
                                     ' v' + e.version),
    el('dt', {}, 'Created'), el('dd', {}, when(e.created_at)),
    el('dt', {}, 'Started'), el('dd', {}, when(e.started_at)),
    el('dt', {}, 'Completed'), el('dd', {}, when(e.completed_at)),
    el('dt', {}, 'Duration'), el('dd', {}, duration(e.duration_ms)),
    e.parent_id ? [el('dt', {}, 'Parent'),
                   el('dd', {}, el('a', {href: executionLink(e.parent_id)}, e.parent_id),
                      e.parent_step ? ' (step ' + e.parent_step + ')' : '')] : null,
    e.children && e.children.length
      ? [el('dt', {}, 'Children'), el('dd', {id: 'children'}, e.children.map((c) => el('span', {class: 'child'},
          el('a', {href: executionLink(c.id), class: 'mono'}, c.id), ' ', statusBadge(c.status), ' ')))] : null);

  const actions = canWrite() ? el('div', {class: 'actions', id: 'actions'},
    !TERMINAL.has(e.status) ? el('button', {class: 'danger', id: 'cancel', onclick: () => act(id, 'cancel')}, 'Cancel') : null,
    e.status === 'running' ? el('button', {id: 'pause', onclick: () => act(id, 'pause')}, 'Pause') : null,
    e.status === 'paused' ? el('button', {id: 'resume', onclick: () => act(id, 'resume')}, 'Resume') : null,
    TERMINAL.has(e.status) && e.status !== 'completed'
      ? el('button', {id: 'retry', onclick: () => act(id, 'retry')}, 'Retry') : null) : null;

  // Long step lists are shown STEPS_SHOWN at a time.
  if (stepsShown.id !== id) stepsShown = {id, n: STEPS_SHOWN};
  const visible = e.steps.slice(0, stepsShown.n);
  const more = e.steps.length - visible.length;
  const steps = table('steps', ['Step', 'Status', 'Attempts', 'Started', 'Completed', 'Error'],
    visible.map((s) => el('tr', {
      class: 'clickable' + (s.id === selected ? ' selected' : ''), 'data-step': s.id,
      onclick: () => { location.hash = executionLink(id, s.id); },
    },
    el('td', {class: 'mono'}, s.id), el('td', {}, statusBadge(s.status)), el('td', {}, s.attempts),
    el('td', {}, when(s.started_at)), el('td', {}, when(s.completed_at)),
    el('td', {class: 'error'}, s.error && s.error.message ? s.error.message : s.waiting || ''))));

  const step = e.steps.find((s) => s.id === selected);
  const fan = definition && (definition.steps || []).some((d) => d.id === selected && d.for_each);
  const stepWhy = why && why.steps ? why.steps.find((w) => w.step_id === selected) : null;
  const panel = step ? stepPanel(e, id, step, assignments.assignments.filter((a) => a.stepId === step.id),
                                 letters.entries.find((d) => d.step_id === step.id),
                                 fan ? instanceStrip(step, stepWhy && stepWhy.instances) : null) : null;

  const waiting = why && why.steps && why.steps.length ? [
    el('h2', {}, 'Why is it waiting'),
    el('table', {id: 'why'}, el('tbody', {}, why.steps.map((w) => el('tr', {'data-step': w.step_id},
      el('td', {class: 'mono'}, w.step_id), el('td', {}, statusBadge(w.status)), el('td', {}, w.reason),
      el('td', {}, w.kind === 'signal' && canWrite() ? signalForm(id, w.signal) : null))))),
  ] : null;

  const log = table('events', ['#', 'Time', 'Type', 'Step', 'Data'], events.events.map((ev) => el('tr', {},
    el('td', {}, ev.seq), el('td', {}, when(ev.time)), el('td', {class: 'mono'}, ev.type),
    el('td', {class: 'mono'}, ev.step_id || ''),
    el('td', {class: 'mono'}, ev.data && Object.keys(ev.data).length ? JSON.stringify(ev.data) : ''))));

  show(gen, el('p', {}, el('a', {href: '#/executions'}, '← Executions')),
       el('h1', {class: 'mono'}, id), facts, actions,
       el('h2', {}, 'Graph'), dag(e, definition, id, why),
       el('h2', {}, 'Input'), json(e.input),
       e.output !== null ? [el('h2', {}, 'Output'), json(e.output)] : null,
       e.error ? [el('h2', {}, 'Error'), el('pre', {class: 'error', id: 'execution-error'},
                                           JSON.stringify(e.error, null, 2))] : null,
       el('h2', {}, 'Timeline'), timeline(e, visible, definition, events.events),
       el('h2', {}, 'Steps'), steps,
       more > 0 ? el('p', {}, el('button', {id: 'more-steps', onclick: () => { stepsShown.n += STEPS_SHOWN; route(); }},
                                 more + ' more steps: show ' + Math.min(more, STEPS_SHOWN) + ' more')) : null,
       panel, waiting,
       el('h2', {}, 'Events'), log,
       el('div', {class: 'pager'},
          eventsAfter > 0 ? el('a', {id: 'first-events', href: executionLink(id) + withParams(params, {events: ''})}, '← First events') : null,
          events.next_after ? el('a', {id: 'next-events', href: executionLink(id) + withParams(params, {events: String(events.next_after)})},
                                 'Next ' + EVENTS_SHOWN + ' events →') : null));

  if (!TERMINAL.has(e.status)) {
    // From the last event read: none is missed between the fetch and the feed's start.
    const last = events.events.length ? events.events[events.events.length - 1].seq : 0;
    follow('execution ' + id, '?execution=' + encodeURIComponent(id) + '&since=' + last, (ev) => {
      noteFanProgress(id, ev);
      soon(() => route());
    });
  } else {
    stopFollowing();
  }
}

// A step: a for_each step's instances, its error, stderr (with a copy button), output,
// the input it failed with (its dead letter's), and every attempt with the worker that ran it, its timing, checkpoint
// and reassignments.
function stepPanel(e, id, step, assignments, letter, instances) {
  const byAttempt = new Map(assignments.map((a) => [a.attempt, a]));
  const attempts = (step.attempt_history || []).map((a) => {
    const held = byAttempt.get(a.attempt);
    const ran = a.started_at ? (a.completed_at ? Date.parse(a.completed_at) : Date.now()) - Date.parse(a.started_at) : null;
    return el('tr', {'data-attempt': a.attempt},
      el('td', {}, a.attempt), el('td', {}, statusBadge(a.status)),
      el('td', {class: 'mono'}, held ? held.workerId || '(waiting for a worker)' : 'this server'),
      el('td', {}, when(a.started_at)), el('td', {}, duration(ran)),
      el('td', {class: 'error'}, a.error && a.error.message ? a.error.message : ''),
      el('td', {}, held && held.reassignments ? held.reassignments + '×' : ''),
      el('td', {class: 'mono'}, held && held.checkpoint !== null && held.checkpoint !== undefined
        ? JSON.stringify(held.checkpoint) : ''));
  });
  return el('div', {class: 'panel', id: 'step-panel'},
    el('h3', {}, 'Step ' + step.id + (step.name ? ' — ' + step.name : '')),
    el('p', {}, statusBadge(step.status), ' ', step.attempts + ' attempt(s)',
       step.exit_code !== undefined ? ', exit code ' + step.exit_code : '',
       step.waiting ? el('span', {class: 'muted'}, ' — ' + step.waiting) : null),
    instances,
    step.error ? [el('h2', {}, 'Error'), json(step.error)] : null,
    step.stderr ? [el('h2', {}, 'Stderr ', el('button', {class: 'link', id: 'copy-stderr', type: 'button',
                                                         onclick: () => navigator.clipboard.writeText(step.stderr)}, 'copy')),
                   el('pre', {id: 'stderr'}, step.stderr)] : null,
    step.output !== null && step.output !== undefined ? [el('h2', {}, 'Output'), json(step.output)] : null,
    letter ? [el('h2', {}, 'Input it failed with ', el('a', {href: '#/dlq', class: 'muted'}, '(dead letter ' + letter.id + ', ' + letter.status + ')')),
              el('div', {id: 'failed-input'}, json(letter.input))] : null,
    attempts.length ? [el('h2', {}, 'Attempts'),
      table('attempts', ['#', 'Status', 'Worker', 'Started', 'Ran', 'Error', 'Moved', 'Checkpoint'], attempts)] : null,
    canWrite() && TERMINAL.has(e.status)
      ? el('p', {}, el('button', {id: 'retry-from', onclick: async () => {
          if (!confirm('Run ' + step.id + ' and every step after it again?')) return;
          await api('POST', '/api/v1/executions/' + encodeURIComponent(id) + '/retry', {from: step.id})
            .catch((err) => alert(err.message));
          route();
        }}, 'Retry from this step')) : null);
}

// Each step's attempts on the execution's time axis (from its start to its end, or to now
// while it runs): the queue wait before the first attempt (from its step.ready event,
// when the log shown has it), each attempt's run, the retry backoff between attempts,
// and a wait step's timer.
function timeline(e, visible, definition, events) {
  const t0 = Date.parse(e.started_at || e.created_at);
  const t1 = e.completed_at ? Date.parse(e.completed_at) : Date.now();
  const span = Math.max(t1 - t0, 1);
  const readyAt = new Map();
  for (const ev of events) if (ev.type === 'step.ready' && !readyAt.has(ev.step_id)) readyAt.set(ev.step_id, Date.parse(ev.time));
  const types = new Map(((definition && definition.steps) || []).map((s) => [s.id, s.type]));
  const rows = visible.filter((s) => s.started_at || (s.attempt_history || []).length).map((s) => {
    const attempts = (s.attempt_history || []).map((a) => ({from: a.started_at, to: a.completed_at, status: a.status}));
    const last = attempts.length ? attempts[attempts.length - 1] : null;
    if (s.started_at && (!last || last.from !== s.started_at)) {
      attempts.push({from: s.started_at, to: s.completed_at, status: s.status});
    }
    const track = el('div', {class: 'track'});
    const segment = (cls, from, to, title) => {
      if (!(to >= from)) return;
      const bar = el('span', {class: 'bar ' + cls, title: title + ', ' + duration(Math.max(to - from, 0))});
      bar.style.left = (100 * (from - t0) / span) + '%';
      bar.style.width = Math.max(100 * (to - from) / span, 0.4) + '%';
      track.append(bar);
    };
    const first = attempts.length ? Date.parse(attempts[0].from) : NaN;
    if (readyAt.has(s.id) && first > readyAt.get(s.id)) segment('queued', readyAt.get(s.id), first, 'queued');
    let previousEnd = null;
    attempts.forEach((a, i) => {
      const from = Date.parse(a.from), to = a.to ? Date.parse(a.to) : t1;
      if (previousEnd !== null && from > previousEnd) segment('backoff', previousEnd, from, 'retry backoff');
      const timer = types.get(s.id) === 'wait';
      segment('status ' + a.status + (timer ? ' timer' : ''), from, to,
              (timer ? 'waiting (timer or signal), ' : 'attempt ' + (i + 1) + ', ') + a.status);
      previousEnd = a.to ? to : null;
    });
    if (s.status === 'waiting_retry' && previousEnd !== null) segment('backoff', previousEnd, t1, 'retry backoff');
    return el('div', {class: 'lane', 'data-step': s.id}, el('span', {class: 'mono lane-name'}, s.id), track);
  });
  return el('div', {class: 'timeline', id: 'timeline'},
            rows.length ? rows : el('p', {class: 'muted'}, 'No step has started yet.'),
            el('div', {class: 'axis muted'}, el('span', {}, when(e.started_at || e.created_at)),
               el('span', {class: 'legend'}, el('span', {class: 'key queued'}), 'queued ',
                  el('span', {class: 'key running'}), 'running ', el('span', {class: 'key backoff'}), 'backoff ',
                  el('span', {class: 'key timer'}), 'timer'),
               el('span', {}, duration(t1 - t0))));
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
