// Baton's dashboard: workers (status, heartbeat age, load, what each runs now, drain),
// the coordinator's health and recent reassignments; and the dead letters, grouped by
// error fingerprint, with replay and discard.
'use strict';

// An assignment id is "EXECUTION/STEP/ATTEMPT[.rN]": a link to that step.
function assignmentLink(id) {
  const [execution, step] = id.split('/');
  return el('a', {href: executionLink(execution, step), class: 'mono'}, id);
}

async function renderWorkers(gen) {
  const [list, health, moved] = await Promise.all([
    api('GET', '/api/v1/workers'),
    api('GET', '/api/v1/coordinator/health').catch(() => null),
    api('GET', '/api/v1/reassignments?limit=20').catch(() => ({reassignments: []})),
  ]);
  show(gen, el('h1', {}, 'Workers'),
       table('workers', ['Worker', 'Status', 'Host', 'Load', 'Running now', 'Commands', 'Tags', 'Heartbeat', ''],
         list.workers.map((w) => el('tr', {'data-worker': w.workerId},
           el('td', {class: 'mono'}, w.workerId), el('td', {}, statusBadge(w.status.toLowerCase())),
           el('td', {}, w.host), el('td', {}, w.currentLoad + ' / ' + w.capacity),
           el('td', {class: 'assignments'}, (w.assignments || []).slice(0, 10).map((a) => el('div', {}, assignmentLink(a))),
              (w.assignments || []).length > 10 ? el('div', {class: 'muted'}, '+' + (w.assignments.length - 10) + ' more') : null),
           el('td', {class: 'mono'}, (w.commands || []).join(', ')), el('td', {}, (w.tags || []).join(', ')),
           el('td', {title: when(w.lastHeartbeat)}, age(w.lastHeartbeat)),
           el('td', {}, canWrite() && !w.local && w.status === 'ONLINE'
             ? el('button', {class: 'drain', onclick: async () => {
                 if (!confirm('Drain worker ' + w.workerId + '? It takes no new work.')) return;
                 await api('DELETE', '/api/v1/workers/' + encodeURIComponent(w.workerId)).catch((e) => alert(e.message));
                 route();
               }}, 'Drain') : null))),
         'No worker is connected.'),
       health ? el('p', {class: 'muted', id: 'coordinator'},
         `${health.onlineWorkers} online, ${health.unhealthyWorkers} unhealthy, ${health.drainingWorkers} draining; ` +
         `${health.usedCapacity} of ${health.totalCapacity} slots in use; ${health.waitingAssignments} waiting for a worker; ` +
         `${health.reassignmentEvents} reassignments, ${health.heartbeatMisses} missed heartbeats`) : null,
       el('h2', {}, 'Recent reassignments'),
       table('reassignments', ['When', 'Step', 'From', 'To', 'Reason'], moved.reassignments.map((r) => el('tr', {},
         el('td', {}, when(r.reassignedAt)),
         el('td', {class: 'mono'}, el('a', {href: executionLink(r.executionId, r.stepId)}, r.executionId + '/' + r.stepId)),
         el('td', {class: 'mono'}, r.fromWorkerId), el('td', {class: 'mono'}, r.toWorkerId || ''), el('td', {}, r.reason)))));
  // Workers come and go without events: read again every two seconds while shown.
  every(2000);
}

async function renderDeadLetters(gen) {
  stopFollowing();
  const [stats, page] = await Promise.all([
    api('GET', '/api/v1/dlq/stats?status=open'),
    api('GET', '/api/v1/dlq?status=open&limit=' + PAGE),
  ]);
  const groups = table('dlq-groups', ['Workflow', 'Step', 'Code', 'Count', 'Last failed'],
    stats.by_fingerprint.map((g) => el('tr', {},
      el('td', {}, g.workflow), el('td', {class: 'mono'}, g.step_id), el('td', {class: 'mono'}, g.code),
      el('td', {}, g.count), el('td', {}, when(g.last_failed_at)))));
  const entries = table('dlq', ['#', 'Execution', 'Step', 'Error', 'Last failed', ''],
    page.entries.map((d) => el('tr', {'data-entry': d.id},
      el('td', {}, d.id),
      el('td', {class: 'mono'}, el('a', {href: executionLink(d.execution_id, d.step_id)}, d.execution_id)),
      el('td', {class: 'mono'}, d.workflow + '/' + d.step_id),
      el('td', {class: 'error'}, d.error && d.error.message ? d.error.message : d.code),
      el('td', {}, when(d.last_failed_at)),
      el('td', {}, canWrite() ? [
        el('button', {class: 'replay', onclick: async () => {
          await api('POST', '/api/v1/dlq/' + d.id + '/replay', {}).catch((e) => alert(e.message));
          route();
        }}, 'Replay'), ' ',
        el('button', {class: 'discard danger', onclick: async () => {
          if (!confirm('Discard dead letter ' + d.id + '?')) return;
          await api('DELETE', '/api/v1/dlq/' + d.id).catch((e) => alert(e.message));
          route();
        }}, 'Discard')] : null))),
    'No open dead letters.');
  const bulk = canWrite() && stats.total > 0 ? el('p', {}, el('button', {id: 'replay-all', onclick: async () => {
    if (!confirm('Replay all ' + stats.total + ' open dead letters, 10 a second?')) return;
    await api('POST', '/api/v1/dlq/replay', {filter: {}, per_second: 10}).catch((err) => alert(err.message));
    route();
  }}, 'Replay all ' + stats.total)) : null;
  show(gen, el('h1', {}, 'Dead letters'),
       el('p', {class: 'muted'}, stats.total + ' open, by error fingerprint:'), groups, bulk,
       el('h2', {}, 'Open entries'), entries);
}
