// Baton's dashboard: the overview — what runs, waits and failed; the last hour's
// throughput and step durations (charts); workers online, breakers open, stalled
// executions.
'use strict';

async function renderOverview(gen) {
  const [counts, activity, health, breakers] = await Promise.all([
    api('GET', '/api/v1/executions/counts'),
    api('GET', '/api/v1/activity'),
    api('GET', '/api/v1/coordinator/health').catch(() => null),
    api('GET', '/api/v1/breakers').catch(() => ({breakers: []})),
  ]);
  const c = counts.counts;
  const open = breakers.breakers.filter((b) => b.state !== 'closed');
  const hour = activity.hour;
  const tile = (id, label, value, href, bad) => el('a', {class: 'tile' + (bad ? ' bad' : ''), id, href},
    el('span', {class: 'value'}, value), el('span', {class: 'label'}, label));
  const minutes = activity.minutes;
  show(gen, el('h1', {}, 'Overview'),
       el('div', {class: 'tiles'},
         tile('tile-running', 'running', c.running || 0, '#/executions?status=running'),
         tile('tile-queued', 'queued', c.queued || 0, '#/executions?status=queued'),
         tile('tile-paused', 'paused', c.paused || 0, '#/executions?status=paused'),
         tile('tile-failed', 'failed in the last hour', hour.executions_failed, '#/executions?status=failed',
              hour.executions_failed > 0),
         tile('tile-workers', 'workers online', health ? health.onlineWorkers : '–', '#/workers'),
         tile('tile-breakers', 'breakers open', open.length, '#/resources', open.length > 0),
         tile('tile-stalled', 'stalled', activity.stalled.length, '#/overview', activity.stalled.length > 0)),
       el('h2', {}, 'Steps finished per minute'),
       barChart('chart-throughput', minutes, [
         {key: 'steps_completed', cls: 'completed', label: 'completed'},
         {key: 'steps_failed', cls: 'failed', label: 'failed'}]),
       el('p', {class: 'muted'}, hour.steps_completed + ' completed, ' + hour.steps_failed + ' failed in the last hour; ' +
          hour.executions_started + ' executions started (or retried), ' + hour.executions_completed + ' completed.'),
       el('h2', {}, 'Step duration, p50 and p99'),
       lineChart('chart-duration', minutes, [
         {key: 'step_p50_ms', cls: 'p50', label: 'p50'}, {key: 'step_p99_ms', cls: 'p99', label: 'p99'}]),
       el('p', {class: 'muted'}, (hour.step_p50_ms === null ? 'No step finished in the last hour. '
          : 'Over the hour: p50 ' + duration(hour.step_p50_ms) + ', p99 ' + duration(hour.step_p99_ms) + '. ') +
          'The charts count this server\'s own work since it started.'),
       el('h2', {}, 'Stalled executions'),
       table('stalled', ['Execution', 'Workflow', 'Stalled since'], activity.stalled.map((s) => el('tr', {},
         el('td', {class: 'mono'}, el('a', {href: executionLink(s.execution_id)}, s.execution_id)),
         el('td', {}, s.workflow), el('td', {}, when(s.since)))),
         'None: every running execution has moved recently (baton server --stall-after sets how recently).'),
       open.length ? [el('h2', {}, 'Open breakers'), table('open-breakers', ['Key', 'State', 'Next probe'],
         open.map((b) => el('tr', {}, el('td', {class: 'mono'}, b.key), el('td', {}, statusBadge(b.state)),
                                el('td', {}, when(b.probe_at)))))] : null);
  every(5000);
}

const CHART_W = 720, CHART_H = 140, CHART_PAD = 28;

function chartFrame(id, max, minutes, unit) {
  const svg = svgEl('svg', {id, class: 'chart', viewBox: `0 0 ${CHART_W} ${CHART_H + 20}`, width: CHART_W, height: CHART_H + 20});
  svg.append(svgEl('line', {class: 'axis', x1: CHART_PAD, y1: CHART_H, x2: CHART_W, y2: CHART_H}));
  const top = svgEl('text', {x: 0, y: 12, class: 'tick'});
  top.textContent = unit(max);
  const left = svgEl('text', {x: CHART_PAD, y: CHART_H + 16, class: 'tick'});
  left.textContent = new Date(Date.parse(minutes[0].at)).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'});
  const right = svgEl('text', {x: CHART_W - 30, y: CHART_H + 16, class: 'tick'});
  right.textContent = 'now';
  svg.append(top, left, right);
  return svg;
}

function legend(series) {
  return el('div', {class: 'legend'}, series.map((s) => [el('span', {class: 'key ' + s.cls}), s.label + ' ']));
}

// One stacked bar per minute.
function barChart(id, minutes, series) {
  const totals = minutes.map((m) => series.reduce((n, s) => n + (m[s.key] || 0), 0));
  const max = Math.max(1, ...totals);
  const svg = chartFrame(id, max, minutes, (v) => String(v));
  const slot = (CHART_W - CHART_PAD) / minutes.length;
  minutes.forEach((m, i) => {
    let y = CHART_H;
    for (const s of series) {
      const v = m[s.key] || 0;
      if (!v) continue;
      const h = (CHART_H - 16) * v / max;
      y -= h;
      const bar = svgEl('rect', {class: 'bar ' + s.cls, x: CHART_PAD + i * slot + 1, y, width: Math.max(slot - 2, 1), height: h});
      const title = svgEl('title');
      title.textContent = new Date(Date.parse(m.at)).toLocaleTimeString() + ': ' + v + ' ' + s.label;
      bar.append(title);
      svg.append(bar);
    }
  });
  return el('div', {}, svg, legend(series));
}

// One line per series, a point per minute that has a value.
function lineChart(id, minutes, series) {
  const values = minutes.flatMap((m) => series.map((s) => m[s.key]).filter((v) => v !== null && v !== undefined));
  const max = Math.max(1, ...values);
  const svg = chartFrame(id, max, minutes, (v) => duration(v));
  const slot = (CHART_W - CHART_PAD) / minutes.length;
  for (const s of series) {
    const points = [];
    minutes.forEach((m, i) => {
      const v = m[s.key];
      if (v === null || v === undefined) return;
      const x = CHART_PAD + i * slot + slot / 2, y = CHART_H - (CHART_H - 16) * v / max;
      points.push(x + ',' + y);
      const dot = svgEl('circle', {class: 'dot ' + s.cls, cx: x, cy: y, r: 3});
      const title = svgEl('title');
      title.textContent = new Date(Date.parse(m.at)).toLocaleTimeString() + ': ' + s.label + ' ' + duration(v);
      dot.append(title);
      svg.append(dot);
    });
    if (points.length > 1) svg.append(svgEl('polyline', {class: 'line ' + s.cls, points: points.join(' ')}));
  }
  return el('div', {}, svg, legend(series));
}
