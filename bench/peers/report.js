'use strict';
// Reads the result lines of run.sh (JSON, one a line) and prints the medians per shape and
// system with the ratio Baton/peer (Baton on SQLite, and on PostgreSQL as `baton-pg`).
// Usage: node report.js results.jsonl [--markdown]

const fs = require('fs');

const file = process.argv[2];
const markdown = process.argv.includes('--markdown');
const rows = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

const median = (xs) => {
  const s = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const SHAPES = ['flows', 'jobs', 'latency', 'worker-jobs', 'worker-latency'];
const isBaton = (s) => s.startsWith('baton');
const systems = [...new Set(rows.map((r) => r.system))].sort((a, b) =>
  (isBaton(a) !== isBaton(b) ? (isBaton(a) ? -1 : 1) : a.localeCompare(b)));
const batons = systems.filter(isBaton);
const peers = systems.filter((s) => !isBaton(s));
const pairs = batons.flatMap((b) => peers.map((p) => [b, p]));

// One line per figure: throughput shapes give one, latency shapes p50 and p99.
const figures = [];
for (const shape of SHAPES) {
  const of = rows.filter((r) => r.shape === shape);
  if (of.length === 0) continue;
  const latency = shape.endsWith('latency');
  const metrics = latency ? [['p50_ms', 'p50 ms'], ['p99_ms', 'p99 ms']] : [['value', of[0].unit]];
  for (const [key, unit] of metrics) {
    const cells = {};
    const runs = {};
    for (const s of systems) {
      const mine = of.filter((r) => r.system === s);
      cells[s] = mine.length ? median(mine.map((r) => r[key])) : undefined;
      runs[s] = mine.length;
    }
    figures.push({ shape, unit, latency, cells, runs, n: Math.max(...of.map((r) => r.n || 0)) });
  }
}

const fmt = (v, latency) => {
  if (v === undefined) return '-';
  if (v === null) return 'n/a';
  return latency ? v.toFixed(2) : Math.round(v).toLocaleString('en-US');
};
const ratio = (b, p) => (b == null || p == null || p === 0 ? '-' : `${(b / p).toFixed(2)}x`);

const header = ['shape', 'n', 'unit', ...systems, ...pairs.map(([b, p]) => `${b}/${p}`)];
const table = figures.map((f) => [
  f.shape, f.n.toLocaleString('en-US'), f.unit,
  ...systems.map((s) => fmt(f.cells[s], f.latency)),
  ...pairs.map(([b, p]) => ratio(f.cells[b], f.cells[p])),
]);

const rounds = Math.max(0, ...figures.flatMap((f) => Object.values(f.runs)));
if (markdown) {
  console.log(`| ${header.join(' | ')} |`);
  console.log(`| ${header.map(() => '---').join(' | ')} |`);
  for (const r of table) console.log(`| ${r.join(' | ')} |`);
} else {
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i < 3 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  console.log(`medians of ${rounds} round(s); ratio = Baton / peer (throughput: > 1 Baton faster; latency: < 1 Baton faster)`);
  console.log(line(header));
  for (const r of table) console.log(line(r));
}

// How much CPU the hypervisor took while the drivers ran: a vCPU descheduled for a few
// milliseconds lands in the latency tails of every system alike.
const steals = rows.map((r) => r.steal_pct).filter((x) => Number.isFinite(x));
if (steals.length) {
  const note = `CPU stolen by the hypervisor during the runs: median ${median(steals).toFixed(1)} %, max ${Math.max(...steals).toFixed(1)} %`;
  console.log(markdown ? `\n${note}.` : note);
}
