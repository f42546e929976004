// How fast the dashboard draws on large data, in Debian's headless Chromium against a
// real `baton server` (issue 15's targets: the executions view with 100,000 executions in
// the store < 1 s to first render; a 5,000-step execution's graph < 2 s). Usage:
//   node render_bench.js BATON_BINARY [EXECUTIONS] [STEPS] [ROUNDS]
// Prints one JSON line: the medians of ROUNDS page loads (milliseconds from navigation to
// the view drawn, measured in the page by performance.now()), the bytes the browser
// fetched, and the setup's own figures.
import {chromium} from 'playwright-core';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [bin, nExec = '100000', nSteps = '5000', nRounds = '5'] = process.argv.slice(2);
if (!bin) {
  console.error('usage: node render_bench.js BATON_BINARY [EXECUTIONS] [STEPS] [ROUNDS]');
  process.exit(2);
}
const executions = Number(nExec), steps = Number(nSteps), rounds = Number(nRounds);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-render-'));
const server = spawn(bin, ['server', '--listen', '127.0.0.1:0', '--db', path.join(work, 'baton.db'),
                           '--credentials', path.join(work, 'creds.json'), '--rate-limit', '0'],
                     {stdio: 'ignore'});
let browser = null;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function until(fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  const creds = await until(() => {
    try { return JSON.parse(fs.readFileSync(path.join(work, 'creds.json'), 'utf8')); } catch (e) { return null; }
  });
  const url = creds.server;
  const call = async (method, p, body, type = 'application/json') => {
    const r = await fetch(url + p, {method, headers: {Authorization: 'Bearer ' + creds.token, 'Content-Type': type},
                                    body: typeof body === 'string' ? body : JSON.stringify(body)});
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  await call('POST', '/api/v1/workflows', 'name: one\nsteps:\n  - {id: only, type: noop}\n', 'application/yaml');
  const t0 = Date.now();
  for (let done = 0; done < executions; done += 1000) {
    const batch = [];
    for (let i = 0; i < Math.min(1000, executions - done); ++i) batch.push({workflow: 'one'});
    await call('POST', '/api/v1/executions/batch', {executions: batch});
  }
  const seeded_ms = Date.now() - t0;
  // A fan-out: `root`, then STEPS - 1 steps that depend on it.
  const defn = {name: 'wide', steps: [{id: 'root', type: 'noop'}]};
  for (let i = 1; i < steps; ++i) defn.steps.push({id: 's' + i, type: 'noop', depends_on: ['root']});
  await call('POST', '/api/v1/workflows', JSON.stringify(defn));
  const wide = (await call('POST', '/api/v1/executions', {workflow: 'wide'})).id;
  await until(async () => (await call('GET', '/api/v1/executions/' + wide)).status === 'completed');

  browser = await chromium.launch({
    executablePath: process.env.BATON_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({viewport: {width: 1280, height: 860}});
  const page = await context.newPage();
  let bytes = 0;
  page.on('response', async (r) => {
    const len = Number((await r.allHeaders())['content-length'] || 0);
    bytes += len;
  });
  // Everything the browser fetches for its first view (the page, its scripts and styles,
  // the overview's data): the bytes the dashboard ships.
  bytes = 0;
  await page.goto(url + '/');
  await page.fill('#login input[name=token]', creds.token);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('#tile-running');
  const shipped = bytes;

  // From navigation start to the view in the DOM, measured by the page itself.
  const timed = async (hash, selector) => {
    await page.goto('about:blank');
    bytes = 0;
    await page.goto(url + '/' + hash);
    await page.waitForSelector(selector, {timeout: 30000});
    return page.evaluate(() => performance.now());
  };
  const overview = [], list = [], graph = [], opened = [];
  for (let i = 0; i < rounds; ++i) {
    overview.push(await timed('#/overview', '#chart-throughput'));
    list.push(await timed('#/executions', '#executions tr[data-id]'));
    // The fan-out drawn as one node, then opened: every step drawn.
    graph.push(await timed('#/executions/' + wide, '#dag g.node[data-layer]'));
    const before = await page.evaluate(() => performance.now());
    await page.click('#dag g.node[data-layer]');
    await page.waitForSelector('#dag g.node[data-step="s' + (steps - 1) + '"]', {timeout: 30000});
    opened.push(await page.evaluate(() => performance.now()) - before);
  }
  const nodes = await page.$$eval('#dag g.node', (g) => g.length);
  console.log(JSON.stringify({
    executions, steps, rounds, seeded_ms,
    overview_ms: Math.round(median(overview)), overview_all: overview.map(Math.round),
    executions_view_ms: Math.round(median(list)), executions_view_all: list.map(Math.round),
    graph_view_ms: Math.round(median(graph)), graph_view_all: graph.map(Math.round),
    graph_opened_ms: Math.round(median(opened)), graph_opened_all: opened.map(Math.round), graph_nodes: nodes,
    first_load_bytes: shipped,
  }));
}

main().then(() => 0, (e) => { console.error('render bench FAILED: ' + e.message); return 1; }).then(async (rc) => {
  if (browser) await browser.close().catch(() => {});
  server.kill('SIGTERM');
  fs.rmSync(work, {recursive: true, force: true});
  process.exit(rc);
});
