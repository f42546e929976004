// The dashboard in a real browser: Debian's headless Chromium, driven by playwright-core,
// against a real `baton server` on a free loopback port. Usage:
//   node dashboard_test.js BATON_BINARY SCREENSHOT_DIR
// Exits 0 when every check held; otherwise prints the first failure and exits 1.
//
// What it checks, from the outside: the page asks for a token and answers 401 without a
// session; a token becomes an HttpOnly, SameSite=Strict cookie; the executions list shows
// new executions live, filters by status (kept in the URL), counts by status and searches
// inputs and outputs; a failed execution shows
// its error and its step's panel, and Retry runs it again to completion; values holding
// markup (<script>, <img onerror>) are shown as text and run nothing; a cookie write
// without the CSRF header is refused; a workflow started from its form (built from its
// inputs) shows its graph going green live; a wide fan-out is one node until opened; a
// worker is drained; a dead letter is
// replayed, then two in bulk; a step is run again with what follows it; a waiting step is
// approved with a signal; a read-only token sees no action buttons. Then the overview (counts,
// the last hour's charts), a bulk cancel over a filter after a confirmation that names
// how many, a diff between two versions of a workflow, a schedule's next fire, a pool, a
// step blocked on the pool's slot, a for_each step as one node, the event log's pages,
// and a worker's current assignment. It writes a screenshot of each view into
// SCREENSHOT_DIR.
import {chromium} from 'playwright-core';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [bin, shots] = process.argv.slice(2);
if (!bin || !shots) {
  console.error('usage: node dashboard_test.js BATON_BINARY SCREENSHOT_DIR');
  process.exit(2);
}
const CHROMIUM = process.env.BATON_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) {
  console.error(`dashboard test: no Chromium at ${CHROMIUM} (scripts/setup.sh --browser installs it)`);
  process.exit(1);
}
fs.mkdirSync(shots, {recursive: true});
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-dashboard-'));
const server = spawn(bin, ['server', '--listen', '127.0.0.1:0', '--db', path.join(work, 'baton.db'),
                           '--credentials', path.join(work, 'creds.json'), '--rate-limit', '0'],
                     {stdio: ['ignore', 'ignore', 'pipe']});
let serverLog = '';
server.stderr.on('data', (d) => { serverLog += d; });
let browser = null;
let page = null;  // for a screenshot of a failure

function check(condition, what) {
  if (!condition) throw new Error(what);
}

async function until(what, fn, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  const creds = await until('the server to start', () => {
    try { return JSON.parse(fs.readFileSync(path.join(work, 'creds.json'), 'utf8')); } catch (e) { return null; }
  });
  const url = creds.server;
  const call = async (method, p, body, token = creds.token, type = 'application/json') => {
    const r = await fetch(url + p, {method, headers: {Authorization: 'Bearer ' + token, 'Content-Type': type},
                                    body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body))});
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const viewer = (await call('POST', '/api/v1/tokens', {name: 'viewer', scopes: ['read']})).token;
  const flag = path.join(work, 'second-attempt');
  await call('POST', '/api/v1/workflows',
             'name: markup\ninputs:\n  name: {type: string}\nsteps:\n' +
             '  - {id: echo, type: noop, with: {note: "{{ inputs.name }}"}}\n' +
             'output: "{{ steps.echo.output.note }}"\n', creds.token, 'application/yaml');
  // Fails with markup in its error the first time; succeeds once retried.
  await call('POST', '/api/v1/workflows',
             'name: flaky\nsteps:\n  - id: try\n    type: shell\n    run: [sh, -c, ' +
             `'if [ -f ${flag} ]; then echo ok; else touch ${flag}; echo "<img src=x onerror=window.__xss=3>" >&2; exit 3; fi']\n`,
             creds.token, 'application/yaml');
  await call('POST', '/api/v1/workflows',
             'name: slow\nsteps:\n  - {id: nap, type: shell, run: [sleep, "0.5"]}\n', creds.token, 'application/yaml');
  // Started from the form: a diamond whose middle steps take a moment.
  await call('POST', '/api/v1/workflows',
             'name: greet\ninputs:\n  who: {type: string, default: world}\n  times: {type: integer, default: 1}\n' +
             'steps:\n  - {id: hello, type: noop, with: {who: "{{ inputs.who }}"}}\n' +
             '  - {id: left, type: shell, run: [sleep, "0.4"], depends_on: [hello]}\n' +
             '  - {id: right, type: shell, run: [sleep, "0.4"], depends_on: [hello]}\n' +
             '  - {id: bye, type: noop, depends_on: [left, right]}\n', creds.token, 'application/yaml');
  // Waits for an approval.
  await call('POST', '/api/v1/workflows',
             'name: approve\nsteps:\n  - {id: gate, type: wait, signal: approve}\n' +
             '  - {id: ship, type: noop, depends_on: [gate], with: "{{ steps.gate.output.by }}"}\n',
             creds.token, 'application/yaml');
  // Long enough to be cancelled in bulk.
  await call('POST', '/api/v1/workflows',
             'name: nap\nsteps:\n  - {id: nap, type: shell, run: [sleep, "30"]}\n', creds.token, 'application/yaml');
  // One node for its three instances.
  await call('POST', '/api/v1/workflows',
             'name: each\nsteps:\n  - {id: items, type: noop, with: [1, 2, 3]}\n' +
             '  - {id: every, type: noop, for_each: "{{ steps.items.output }}", depends_on: [items]}\n',
             creds.token, 'application/yaml');
  // Run by a remote worker.
  await call('POST', '/api/v1/workflows',
             'name: train\nsteps:\n  - {id: fit, type: command, command: train}\n', creds.token, 'application/yaml');
  // Fails until the file `open` exists: dead letters for the bulk replay.
  const gate = path.join(work, 'open');
  await call('POST', '/api/v1/workflows',
             `name: gated\nsteps:\n  - {id: pass, type: shell, run: [test, -f, ${gate}]}\n`,
             creds.token, 'application/yaml');
  // A dead letter that a replay fixes.
  const fixed = path.join(work, 'fixed');
  await call('POST', '/api/v1/workflows',
             'name: fixable\nsteps:\n  - id: load\n    type: shell\n    run: [sh, -c, ' +
             `'if [ -f ${fixed} ]; then echo ok; else touch ${fixed}; echo "warehouse down" >&2; exit 2; fi']\n`,
             creds.token, 'application/yaml');

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({viewport: {width: 1280, height: 860}});
  page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('dialog', (d) => d.accept());

  // Opens a view by its URL and waits until it is drawn: the view shown before is marked,
  // so that a selector the old view also has cannot be mistaken for the new one (a slow
  // server, under TSan say, draws the new view well after the URL changed).
  const open = async (hash, selector) => {
    await page.evaluate(() => {
      const shown = document.querySelector('#main > div');
      if (shown) shown.dataset.old = '1';
    });
    await page.goto(url + '/' + hash);
    await page.waitForSelector('#main > div:not([data-old]) ' + selector);
  };

  // No session: the login form, and the API answers 401.
  await page.goto(url + '/');
  await page.waitForSelector('#login');
  const anonymous = await page.evaluate(async () => (await fetch('/api/v1/executions')).status);
  check(anonymous === 401, `GET /api/v1/executions without a session: ${anonymous}, not 401`);
  await page.fill('#login input[name=token]', 'bt_' + '0'.repeat(40));
  await page.click('#login button[type=submit]');
  await until('the refusal of a bad token', async () =>
    (await page.textContent('#login-error')).includes('valid bearer token'));
  await page.screenshot({path: path.join(shots, 'login.png')});

  // Log in: an HttpOnly, SameSite=Strict session cookie; the token is not kept by the page.
  await page.fill('#login input[name=token]', creds.token);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('#tile-running');  // the overview first
  await open('#/executions', '#executions');
  const cookie = (await context.cookies()).find((c) => c.name === 'baton_session');
  check(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', 'session cookie flags: ' + JSON.stringify(cookie));
  check(!(await page.evaluate(() => document.cookie)).includes('baton_session'), 'the page can read the cookie');
  const stored = await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage));
  check(!stored.includes(creds.token), 'the token was stored by the page');

  // New executions appear live, without a reload.
  const markup = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">';
  const shown = (await call('POST', '/api/v1/executions', {workflow: 'markup', input: {name: markup}})).id;
  const failed = (await call('POST', '/api/v1/executions', {workflow: 'flaky'})).id;
  const running = (await call('POST', '/api/v1/executions', {workflow: 'slow'})).id;
  for (const id of [shown, failed, running]) {
    await page.waitForSelector(`#executions tr[data-id="${id}"]`, {timeout: 15000});
  }
  await until('the flaky execution to fail, live', async () =>
    (await page.getAttribute(`#executions tr[data-id="${failed}"] .status`, 'data-status')) === 'failed');
  await until('the slow execution to complete, live', async () =>
    (await page.getAttribute(`#executions tr[data-id="${running}"] .status`, 'data-status')) === 'completed');
  await page.screenshot({path: path.join(shots, 'executions.png'), fullPage: true});

  // Filter by status: kept in the URL; only failed rows.
  await page.selectOption('#filters select[name=status]', 'failed');
  await page.click('#filters button[type=submit]');
  await until('the filter in the URL', async () => page.url().includes('status=failed'));
  await until('only failed rows', async () => {
    const statuses = await page.$$eval('#executions .status', (els) => els.map((e) => e.dataset.status));
    return statuses.length === 1 && statuses[0] === 'failed';
  });
  // Counts by status, for the filter without its status.
  check((await page.getAttribute('#counts a[data-status="all"]', 'href')) !== null, 'the counts row');
  check((await page.textContent('#counts a[data-status="failed"]')).includes('1'), 'one failed');
  // The same URL opened afresh shows the same view.
  await page.reload();
  await until('the filtered view after a reload', async () =>
    (await page.$$('#executions tr[data-id]')).length === 1);

  // Search over inputs and outputs: the markup execution by a word of its input.
  await open('#/executions', '#filters');
  await page.fill('#filters input[name=q]', 'xss=2');
  await page.click('#filters button[type=submit]');
  await until('the search in the URL', async () => page.url().includes('q=xss'));
  await until('only the markup execution', async () => {
    const ids = await page.$$eval('#executions tr[data-id]', (rows) => rows.map((r) => r.dataset.id));
    return ids.length === 1 && ids[0] === shown;
  });
  check((await page.textContent('#counts')).includes('1 in all'), 'the counts follow the search');
  await open('#/executions?status=failed', '#executions tr[data-id]');

  // A failed execution: its error, its step's panel, then Retry runs it to completion.
  await page.click(`#executions tr[data-id="${failed}"] a`);
  await page.waitForSelector('#execution-error');
  check((await page.textContent('#execution-error')).includes('exit'), 'the error names the exit');
  await page.click('#steps tr[data-step="try"]');
  await page.waitForSelector('#step-panel');
  check((await page.textContent('#step-panel')).includes('<img src=x onerror=window.__xss=3>'),
        'the step panel shows the stderr markup as text');
  check((await page.textContent('#stderr')).trim() === '<img src=x onerror=window.__xss=3>',
        'the stderr, as text');
  check(await page.$('#copy-stderr'), 'a copy button for the stderr');
  check(await page.$('#failed-input'), 'the input the step failed with (its dead letter\'s)');
  await page.screenshot({path: path.join(shots, 'execution-failed.png'), fullPage: true});
  // A write by cookie without the CSRF header is refused.
  const forged = await page.evaluate(async (id) =>
    (await fetch(`/api/v1/executions/${id}/cancel`, {method: 'POST', body: '{}'})).status, failed);
  check(forged === 403, `a cookie write without X-Baton-Csrf: ${forged}, not 403`);
  await page.click('#retry');
  await until('the retried execution to complete, live', async () =>
    (await page.getAttribute('main .grid .status', 'data-status')) === 'completed');
  const attempts = await page.textContent('#steps tr[data-step="try"] td:nth-child(3)');
  check(attempts.trim() === '2', `attempts after the retry: ${attempts}`);
  const bars = await page.$$eval('#timeline .lane[data-step="try"] .bar.status', (b) => b.map((x) => x.className));
  check(bars.length === 2 && bars[0].includes('failed') && bars[1].includes('completed'),
        'the timeline shows both attempts: ' + JSON.stringify(bars));
  check(await page.$('#timeline .lane[data-step="try"] .bar.backoff'), 'the wait between the attempts');
  // The step panel lists each attempt, with what ran it.
  await page.click('#steps tr[data-step="try"]');
  await page.waitForSelector('#attempts tr[data-attempt="2"]');
  check((await page.textContent('#attempts tr[data-attempt="1"]')).includes('this server'), 'who ran attempt 1');

  // Markup from a workflow is shown as text and runs nothing.
  await open('#/executions/' + shown, '#steps');
  const text = await page.textContent('main');
  check(text.includes('<script>window.__xss=1</script>'), 'the input markup is shown as text');
  check(await page.evaluate(() => window.__xss === undefined), 'markup ran: window.__xss is set');
  check((await page.$$('main img')).length === 0, 'markup became an <img> element');
  await page.screenshot({path: path.join(shots, 'execution.png'), fullPage: true});

  // Start a workflow from its form (built from its inputs) and watch its graph go green.
  await open('#/workflows', '#workflows');
  await page.click('#workflows tr[data-name="greet"] a');
  await page.waitForSelector('#start');
  check((await page.getAttribute('#in-who', 'placeholder')) === 'world', 'the default is shown');
  await page.fill('#in-who', 'dashboard');
  await page.fill('#in-times', '3');
  await page.click('#start button[type=submit]');
  await page.waitForSelector('#dag g.node[data-step="bye"]');
  check((await page.$$('#dag path')).length === 4, 'the diamond has 4 edges');
  await until('every node green, live', async () => {
    const s = await page.$$eval('#dag g.node', (gs) => gs.map((g) => g.dataset.status));
    return s.length === 4 && s.every((x) => x === 'completed');
  });
  const started = await page.textContent('main');
  check(started.includes('"who": "dashboard"') && started.includes('"times": 3'), 'the form\'s input');
  await page.screenshot({path: path.join(shots, 'execution-dag.png'), fullPage: true});

  // Run a step and what follows it again.
  await page.click('#dag g.node[data-step="left"]');
  await page.waitForSelector('#retry-from');
  await page.click('#retry-from');
  await until('the left step run twice', async () =>
    (await page.textContent('#steps tr[data-step="left"] td:nth-child(3)')).trim() === '2' &&
    (await page.getAttribute('main .grid .status', 'data-status')) === 'completed');
  check((await page.textContent('#steps tr[data-step="right"] td:nth-child(3)')).trim() === '1',
        'right was not run again');

  // Approve: the signal a waiting step names, sent from its "why" row.
  const waiting = (await call('POST', '/api/v1/executions', {workflow: 'approve'})).id;
  await open('#/executions/' + waiting, '#why tr[data-step="gate"] form.signal');
  check((await page.textContent('#why')).includes('approve'), 'why names the signal');
  await page.fill('#why tr[data-step="gate"] .signal-payload', '{"by": "ops"}');
  await page.click('#why tr[data-step="gate"] form.signal button');
  await until('the approved execution completed, live', async () =>
    (await page.getAttribute('main .grid .status', 'data-status')) === 'completed');
  check((await call('GET', '/api/v1/executions/' + waiting)).steps[1].output === 'ops', 'the payload reached the step');

  // A wide fan-out is one node until opened.
  const fan = {name: 'fan', steps: [{id: 'root', type: 'noop'}]};
  for (let i = 1; i <= 79; ++i) fan.steps.push({id: 's' + i, type: 'noop', depends_on: ['root']});
  await call('POST', '/api/v1/workflows', fan);
  const wide = (await call('POST', '/api/v1/executions', {workflow: 'fan'})).id;
  await open('#/executions/' + wide, '#dag g.node[data-layer]');
  check((await page.textContent('#dag g.node[data-layer]')).includes('79 steps, 79 done'), 'the group\'s count');
  check((await page.$$('#dag g.node')).length === 2, 'root and one group');
  await page.click('#dag g.node[data-layer]');
  await page.waitForSelector('#dag g.node[data-step="s79"]');
  check((await page.$$('#dag g.node')).length === 80, 'every step once opened');
  // Its event log, 200 at a time.
  check((await page.$$('#events tbody tr')).length === 200, 'the first 200 events');
  await page.click('#next-events');
  await until('the next events', async () =>
    (await page.$('#first-events')) !== null &&
    (await page.textContent('#events tbody tr:first-child td:first-child')).trim() === '201');

  // Drain a worker (registered through the long-poll protocol).
  const workerToken = (await call('POST', '/api/v1/tokens', {name: 'w', scopes: ['worker']})).token;
  await call('POST', '/api/v1/workers/register',
             {type: 'register', workerId: 'gpu-1', capacity: 2, commands: ['train'], tags: ['gpu']}, workerToken);
  await open('#/workers', '#workers tr[data-worker="gpu-1"] button.drain');
  await page.screenshot({path: path.join(shots, 'workers.png'), fullPage: true});
  await page.click('#workers tr[data-worker="gpu-1"] button.drain');
  await until('the worker draining', async () =>
    (await page.getAttribute('#workers tr[data-worker="gpu-1"] .status', 'data-status')) === 'draining');

  // Replay a dead letter: the step runs again and the entry leaves the open list.
  const broken = (await call('POST', '/api/v1/executions', {workflow: 'fixable'})).id;
  await until('the dead letter', async () =>
    (await call('GET', '/api/v1/dlq?status=open&execution=' + broken)).entries.length === 1);
  await open('#/dlq', '#dlq tr[data-entry] button.replay');
  check((await page.textContent('#dlq-groups')).includes('fixable'), 'the group by fingerprint');
  check((await page.textContent('#dlq')).includes('warehouse down'), 'the entry\'s error');
  await page.screenshot({path: path.join(shots, 'dead-letters.png'), fullPage: true});
  await page.click('#dlq tr[data-entry] button.replay');
  await until('the open list empty', async () => (await page.$$('#dlq tr[data-entry]')).length === 0);
  await until('the replayed execution completed', async () =>
    (await call('GET', '/api/v1/executions/' + broken)).status === 'completed');

  // Bulk replay, after a confirmation that says how many.
  const blocked = [(await call('POST', '/api/v1/executions', {workflow: 'gated'})).id,
                   (await call('POST', '/api/v1/executions', {workflow: 'gated'})).id];
  await until('two dead letters', async () =>
    (await call('GET', '/api/v1/dlq/stats?status=open')).total === 2);
  fs.writeFileSync(gate, 'open');
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); });
  await page.reload();  // the page shows #/dlq already: read it again
  await page.waitForSelector('#replay-all');
  await page.click('#replay-all');
  check(asked.includes('all 2'), 'the confirmation says how many: ' + asked);
  for (const id of blocked) {
    await until('a bulk-replayed execution completed', async () =>
      (await call('GET', '/api/v1/executions/' + id)).status === 'completed');
  }

  // The overview: counts, the last hour's charts, nothing stalled.
  await open('#/overview', '#chart-throughput');
  check(Number(await page.textContent('#tile-failed .value')) >= 1, 'failed in the last hour');
  check((await page.$$('#chart-throughput rect.bar')).length >= 1, 'bars of finished steps');
  check((await page.$$('#chart-duration circle.dot')).length >= 2, 'p50 and p99 points');
  check(await page.$('#tile-workers'), 'the workers online');
  await page.screenshot({path: path.join(shots, 'overview.png'), fullPage: true});

  // Bulk: cancel what the filter matches, after a confirmation that says how many.
  const naps = [(await call('POST', '/api/v1/executions', {workflow: 'nap'})).id,
                (await call('POST', '/api/v1/executions', {workflow: 'nap'})).id];
  for (const id of naps) {
    await until('a nap running', async () => (await call('GET', '/api/v1/executions/' + id)).status === 'running');
  }
  await open('#/executions?workflow=nap', '#bulk button[data-bulk="cancel"]');
  let confirmed = '';
  page.once('dialog', (d) => { confirmed = d.message(); });
  await page.click('#bulk button[data-bulk="cancel"]');
  await until('the bulk result', async () => (await page.$('#bulk-result')) !== null);
  check(confirmed.includes('Cancel 2 executions'), 'the confirmation says how many: ' + confirmed);
  check((await page.textContent('#bulk-result')).includes('cancelled 2 of 2'), await page.textContent('#bulk-result'));
  for (const id of naps) {
    await until('a nap cancelled', async () => (await call('GET', '/api/v1/executions/' + id)).status === 'cancelled');
  }

  // A second version of a workflow: the diff between them.
  await call('POST', '/api/v1/workflows',
             'name: greet\ninputs:\n  who: {type: string, default: everyone}\n  times: {type: integer, default: 1}\n' +
             'steps:\n  - {id: hello, type: noop, with: {who: "{{ inputs.who }}"}}\n' +
             '  - {id: left, type: shell, run: [sleep, "0.4"], depends_on: [hello]}\n' +
             '  - {id: right, type: shell, run: [sleep, "0.4"], depends_on: [hello]}\n' +
             '  - {id: bye, type: noop, depends_on: [left, right]}\n', creds.token, 'application/yaml');
  await open('#/workflows/greet', '#diff');
  check((await page.textContent('#diff .removed')).includes('world'), 'the old default, removed');
  check((await page.textContent('#diff .added')).includes('everyone'), 'the new default, added');
  await page.screenshot({path: path.join(shots, 'workflow.png'), fullPage: true});

  // A schedule with its next fire, on the workflows view; a pool on the resources view.
  await call('POST', '/api/v1/schedules', {name: 'nightly', workflow: 'greet', cron: '0 3 * * *'});
  await open('#/workflows', '#schedules .next-fire');
  check((await page.textContent('#schedules .next-fire')).trim() !== '', 'the next fire time');
  await call('POST', '/api/v1/pools', {name: 'gpus', slots: 4});
  // A breaker that one failure opens, and a cached result.
  await call('POST', '/api/v1/workflows',
             'name: tripped\nsteps:\n  - id: call\n    type: shell\n    run: [sh, -c, "exit 1"]\n' +
             '    circuit_breaker: {key: warehouse, failure_threshold: 1, recovery_timeout: 1h}\n',
             creds.token, 'application/yaml');
  await call('POST', '/api/v1/workflows',
             'name: cached\nsteps:\n  - {id: embed, type: noop, with: {doc: 1}, cache: {ttl: 1h}}\n',
             creds.token, 'application/yaml');
  const tripped = (await call('POST', '/api/v1/executions', {workflow: 'tripped'})).id;
  const cached = (await call('POST', '/api/v1/executions', {workflow: 'cached'})).id;
  for (const id of [tripped, cached]) {
    await until('a breaker or cache run to end', async () =>
      ['completed', 'failed'].includes((await call('GET', '/api/v1/executions/' + id)).status));
  }
  await open('#/resources', '#pools tr[data-pool="gpus"]');
  check((await page.textContent('#pools tr[data-pool="gpus"]')).includes('0 of 4'), 'the pool\'s use');
  check((await page.getAttribute('#breakers tr[data-breaker="warehouse"] .status', 'data-status')) === 'open',
        'the open breaker');
  check((await page.textContent('#cache')).includes('cached/embed'), 'the cached result');
  await page.screenshot({path: path.join(shots, 'resources.png'), fullPage: true});
  await page.click('#breakers tr[data-breaker="warehouse"] button.reset');
  await until('the breaker closed', async () =>
    (await page.getAttribute('#breakers tr[data-breaker="warehouse"] .status', 'data-status')) === 'closed');

  // A step that waits for a pool's slot is drawn blocked, with the reason.
  await call('POST', '/api/v1/pools', {name: 'one', slots: 1});
  await call('POST', '/api/v1/workflows',
             'name: queue\nsteps:\n  - {id: first, type: shell, run: [sleep, "30"], pool: one}\n' +
             '  - {id: second, type: shell, run: [sleep, "30"], pool: one}\n', creds.token, 'application/yaml');
  const queue = (await call('POST', '/api/v1/executions', {workflow: 'queue'})).id;
  await until('one step holding the slot', async () =>
    (await call('GET', '/api/v1/executions/' + queue)).steps.some((x) => x.status === 'running'));
  await open('#/executions/' + queue, '#dag g.node.blocked');
  check((await page.textContent('#dag g.node.blocked title')).includes('one'), 'the blocked node names the pool');
  await call('POST', '/api/v1/executions/' + queue + '/cancel', {});

  // A for_each step is one node with its instances' count.
  const each = (await call('POST', '/api/v1/executions', {workflow: 'each'})).id;
  await until('the for_each execution', async () => (await call('GET', '/api/v1/executions/' + each)).status === 'completed');
  await open('#/executions/' + each, '#dag g.node.fan[data-step="every"]');
  check((await page.textContent('#dag g.node.fan')).includes('all done'), 'the fan-out node\'s count');
  await page.click('#dag g.node.fan');
  await page.waitForSelector('#instances');
  check((await page.$$('#instances .instance.completed')).length === 3, 'its three instances, done');
  // While it runs: which instances run, which wait (two at a time).
  await call('POST', '/api/v1/workflows',
             'name: slowly\nmax_parallel: 2\ninputs:\n  items: {type: array, default: [1, 2, 3, 4]}\nsteps:\n' +
             '  - {id: each, type: shell, run: [sleep, "30"], for_each: "{{ inputs.items }}"}\n',
             creds.token, 'application/yaml');
  const slowly = (await call('POST', '/api/v1/executions', {workflow: 'slowly'})).id;
  await until('two instances running', async () =>
    ((await call('GET', '/api/v1/executions/' + slowly + '/why')).steps[0].instances || {running: []}).running.length === 2);
  await open('#/executions/' + slowly + '?step=each', '#instances');
  check((await page.$$('#instances .instance.running')).length === 2, 'two instances running');
  check((await page.$$('#instances .instance.pending')).length === 2, 'two instances waiting');
  check((await page.textContent('#dag g.node.fan')).includes('0/4 done'), 'the node counts 0/4');
  await call('POST', '/api/v1/executions/' + slowly + '/cancel', {});

  // A worker's current assignment.
  const trainer = (await call('POST', '/api/v1/tokens', {name: 't', scopes: ['worker']})).token;
  await call('POST', '/api/v1/workers/register',
             {type: 'register', workerId: 'cpu-1', capacity: 1, commands: ['train']}, trainer);
  const fit = (await call('POST', '/api/v1/executions', {workflow: 'train'})).id;
  await until('the command sent to cpu-1', async () =>
    (await call('GET', '/api/v1/workers/cpu-1/poll?wait=1000', undefined, trainer)).messages.length > 0);
  await open('#/workers', '#workers tr[data-worker="cpu-1"] td.assignments a');
  check((await page.textContent('#workers tr[data-worker="cpu-1"] td.assignments')).includes(fit + '/fit'),
        'the worker runs ' + fit + '/fit');

  // The workers view: the coordinator's health, and reassignments.
  await open('#/workers', '#coordinator');
  check((await page.textContent('#coordinator')).includes('draining'), 'the coordinator line');

  // A read-only token: no action buttons.
  await page.click('#logout');
  await page.waitForSelector('#login');
  await page.fill('#login input[name=token]', viewer);
  await page.click('#login button[type=submit]');
  await until('the read-only session', async () => (await page.textContent('#who')).includes('read only'));
  await open('#/executions/' + running, '#steps');
  check((await page.$$('#actions button')).length === 0, 'a read-only token sees action buttons');

  check(pageErrors.length === 0, 'errors in the page: ' + pageErrors.join('; '));
  console.log('dashboard test: every check held; screenshots in ' + shots);
}

main().then(() => 0, async (e) => {
  console.error('dashboard test FAILED: ' + e.message);
  if (page) {
    await page.screenshot({path: path.join(shots, 'failure.png'), fullPage: true}).catch(() => {});
    console.error('the page when it failed: ' + path.join(shots, 'failure.png'));
  }
  if (serverLog) console.error('server log:\n' + serverLog.slice(-4000));
  return 1;
}).then(async (rc) => {
  if (browser) await browser.close().catch(() => {});
  server.kill('SIGTERM');
  fs.rmSync(work, {recursive: true, force: true});
  process.exit(rc);
});
