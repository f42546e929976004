'use strict';
// Baton's side of the comparison, against a running `baton server`.
//
//   node baton.js --shape flows|jobs|latency|worker-jobs|worker-latency --url URL --token T [--n N]
//   (flows and jobs also with --url URL1,URL2,...: instances of one database, submitted to in turn)
//   node baton.js --role worker --url URL --token WORKER_TOKEN [--capacity 50] [--batching on|off]
//                 (child process; --batching off sends and asks for one message per frame)
//   --samples FILE: the latency shapes also write each sample (ms, in order) to FILE
//   --worker baton-persistent --baton PATH: the worker shapes through a real
//   `baton worker --persistent` with noop_handler.js instead of this file's worker
//   [--batch-window MS]: passed to that `baton worker` (its default when not given)
//   --wait on|off: the latency shapes take the submit's answer, which waits for the end
//   (POST ?wait=MS), or the live feed's execution.completed (off, the default)
//
// Prints one JSON line: {system, shape, n, value, unit, ...}.

const http = require('http');
const { fork, spawn } = require('child_process');
const path = require('path');
const WebSocket = require('ws');
const L = require('./lib');

const WORKFLOWS = {
  'bench-noop': 'name: bench-noop\nsteps:\n  - {id: only, type: noop}\n',
  'bench-flow':
    'name: bench-flow\nsteps:\n' +
    Array.from({ length: 10 }, (_, i) => `  - {id: c${i}, type: noop}\n`).join('') +
    `  - {id: join, type: noop, depends_on: [${Array.from({ length: 10 }, (_, i) => `c${i}`).join(', ')}]}\n`,
  'bench-cmd': 'name: bench-cmd\nsteps:\n  - {id: only, type: command, command: bench.noop}\n',
};
const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'timeout', 'cancelled']);

class Api {
  constructor(url, token, sockets) {
    this.url = new URL(url);
    this.token = token;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  }

  request(method, path, body, contentType = 'application/json') {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: this.url.hostname, port: this.url.port, method, path, agent: this.agent,
        headers: {
          Authorization: `Bearer ${this.token}`,
          ...(data !== undefined ? { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(data) } : {}),
        },
      }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      if (data !== undefined) req.write(data);
      req.end();
    });
  }

  async json(method, path, body, okStatuses = [200, 201, 202]) {
    const r = await this.request(method, path, body);
    if (!okStatuses.includes(r.status)) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    return r.text ? JSON.parse(r.text) : null;
  }

  async createWorkflow(name) {
    const r = await this.request('POST', '/api/v1/workflows', WORKFLOWS[name], 'application/yaml');
    if (Math.floor(r.status / 100) !== 2) {
      throw new Error(`POST /api/v1/workflows ${name}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    }
  }

  // Executions finished, by status, from GET /metrics.
  async finished() {
    const r = await this.request('GET', '/metrics');
    if (r.status !== 200) throw new Error(`GET /metrics: HTTP ${r.status}`);
    const out = {};
    for (const m of r.text.matchAll(/^baton_executions_finished_total\{status="([a-z_]+)"\} (\d+)/gm)) {
      out[m[1]] = Number(m[2]);
    }
    return out;
  }

  // Whether this server has POST /api/v1/executions/batch (from its OpenAPI document).
  async hasBatch() {
    const r = await this.request('GET', '/api/v1/openapi.json');
    return r.status === 200 && r.text.includes('/api/v1/executions/batch');
  }
}

// Several instances of one database (--url URL1,URL2,...): submissions go to each in turn,
// the finished counts are summed over their /metrics (an execution runs, and is counted,
// on the instance that accepted it); everything else goes to the first.
class Spread {
  constructor(urls, token, sockets) {
    this.apis = urls.map((u) => new Api(u, token, sockets));
    this.token = token;
    this.next = 0;
  }

  request(method, path, body, contentType) {
    const spread = method === 'POST' && path.startsWith('/api/v1/executions');
    const api = spread ? this.apis[this.next++ % this.apis.length] : this.apis[0];
    return api.request(method, path, body, contentType);
  }

  json(method, path, body, okStatuses) { return Api.prototype.json.call(this, method, path, body, okStatuses); }
  createWorkflow(name) { return this.apis[0].createWorkflow(name); }
  hasBatch() { return this.apis[0].hasBatch(); }

  async finished() {
    const out = {};
    for (const counts of await Promise.all(this.apis.map((a) => a.finished()))) {
      for (const [k, v] of Object.entries(counts)) out[k] = (out[k] || 0) + v;
    }
    return out;
  }
}

async function waitFinished(api, total, base) {
  let last = {};
  const before = (k) => base[k] || 0;
  await L.waitFor(async () => {
    last = await api.finished();
    const bad = ['failed', 'timed_out', 'timeout', 'cancelled'].reduce((a, k) => a + (last[k] || 0) - before(k), 0);
    if (bad > 0) throw new Error(`executions that did not complete: ${JSON.stringify(last)}`);
    return (last.completed || 0) - before('completed') >= total;
  }, { everyMs: 20, what: `${total} completed executions (last ${JSON.stringify(last)})` });
}

// Submits `n` executions of `workflow`: POST /api/v1/executions/batch of `batchSize` (up to
// 4 requests in flight) when the server has that route and batching is on, else single
// POSTs with `inFlight` requests at once.
async function submitMany(api, workflow, n, { inFlight, batch, batchSize = 1000 }) {
  const item = { workflow, input: {} };
  if (batch) {
    const chunks = Math.ceil(n / batchSize);
    await L.pool(chunks, Math.min(inFlight, 4), async (c) => {
      const count = Math.min(batchSize, n - c * batchSize);
      const r = await api.request('POST', '/api/v1/executions/batch',
        { executions: Array.from({ length: count }, () => item) });
      // 201 (or 200: all were repeats); 207 when some item failed, each item saying why.
      if (r.status !== 201 && r.status !== 200) throw new Error(`POST /api/v1/executions/batch: HTTP ${r.status} ${r.text.slice(0, 300)}`);
      const started = JSON.parse(r.text).executions;
      if (!Array.isArray(started) || started.length !== count || started.some((e) => !e.id)) {
        throw new Error(`POST /api/v1/executions/batch: unexpected answer ${r.text.slice(0, 300)}`);
      }
    });
    return;
  }
  const body = JSON.stringify(item);
  await L.pool(n, inFlight, async () => {
    const r = await api.request('POST', '/api/v1/executions', body);
    if (r.status !== 201 && r.status !== 200) throw new Error(`POST /api/v1/executions: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  });
}

// Starts the worker child process and waits until it is registered. `--worker node` (the
// default) is this file's own WebSocket client; `--worker baton-persistent` is the real
// `baton worker --persistent` (binary from --baton) with noop_handler.js as the handler.
async function startWorker(args, api) {
  const tok = await api.json('POST', '/api/v1/tokens', { name: `bench-worker-${Date.now()}`, scopes: ['worker'] });
  if ((args.worker || 'node') === 'baton-persistent') {
    const id = `bench-pw-${process.pid}`;
    const child = spawn(L.need(args, 'baton'), ['worker', '--server', args.url, '--token', tok.token,
      '--id', id, '--persistent', '--quiet', '--capacity', String(L.num(args, 'capacity', 50)),
      '--handler', `bench.noop=${path.join(__dirname, 'noop_handler.js')}`,
      ...(args['batch-window'] !== undefined ? ['--batch-window', String(args['batch-window'])] : [])],
    { stdio: ['ignore', 'ignore', 'ignore'] }); // it logs every command
    for (let i = 0; i < 200; i++) {
      const w = await api.request('GET', `/api/v1/workers/${id}`);
      if (w.status === 200 && JSON.parse(w.text).status === 'ONLINE') return child;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    throw new Error('baton worker did not come ONLINE within 10 s');
  }
  const child = fork(__filename, ['--role', 'worker', '--url', args.url, '--token', tok.token,
    '--capacity', String(L.num(args, 'capacity', 50)), '--batching', args.batching || 'on'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((resolve, reject) => {
    child.once('message', (m) => (m === 'ready' ? resolve() : reject(new Error(`worker: ${m}`))));
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before registering`)));
  });
  return child;
}

async function stopWorker(child) {
  if (!child) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await gone;
}

// Throughput: n executions of `workflow`, from the first submit until /metrics counts n
// completed; `stepsPer` steps per execution.
async function throughput(api, args, workflow, n, stepsPer, shape) {
  const wantBatch = args.batch === undefined ? 'auto' : args.batch;
  const batch = wantBatch === 'on' || (wantBatch === 'auto' && (await api.hasBatch()));
  const inFlight = L.num(args, 'in-flight', 64);
  const base = await api.finished();
  const t0 = L.nowMs();
  await submitMany(api, workflow, n, { inFlight, batch });
  const tSubmitted = L.nowMs();
  await waitFinished(api, n, base);
  const t1 = L.nowMs();
  const secs = (t1 - t0) / 1000;
  return {
    system: 'baton', shape, n, value: (n * stepsPer) / secs, unit: stepsPer > 1 ? 'steps/s' : 'jobs/s',
    seconds: +secs.toFixed(3), submit_per_s: Math.round(n / ((tSubmitted - t0) / 1000)),
    submit: batch ? 'batch of 1000' : `single POSTs, ${inFlight} in flight`,
  };
}

// Latency, `--wait on`: one execution at a time; the submit's answer waits for the
// execution's end (POST /api/v1/executions?wait=MS), as a BullMQ client awaits
// job.waitUntilFinished. Without it the live feed tells (below).
async function latencyByWait(api, args, workflow, n, shape, warmup) {
  const body = JSON.stringify({ workflow, input: {} });
  const samples = [];
  for (let i = 0; i < warmup + n; i++) {
    const t0 = L.nowMs();
    const r = await api.request('POST', '/api/v1/executions?wait=30000', body);
    const t1 = L.nowMs();
    if (r.status !== 201) throw new Error(`POST /api/v1/executions?wait: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    const e = JSON.parse(r.text);
    if (e.status !== 'completed') throw new Error(`execution ${e.id}: ${e.status} when the submit's wait answered`);
    if (i >= warmup) samples.push(t1 - t0);
  }
  if (args.samples) require('fs').writeFileSync(args.samples, samples.map((v) => v.toFixed(3)).join('\n') + '\n');
  return {
    system: 'baton', shape, n, value: L.quantile(samples, 0.5), unit: 'ms',
    p50_ms: +L.quantile(samples, 0.5).toFixed(3), p99_ms: +L.quantile(samples, 0.99).toFixed(3),
    mean_ms: +(samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(3),
    method: 'POST /api/v1/executions?wait=30000 -> its answer saying completed',
  };
}

// Latency: one execution at a time; submit -> the client knows it completed: the POST's
// answer when it already says completed, else the execution.completed event on the live
// feed (a WebSocket on the workflow's events, opened once before the first sample).
async function latency(api, args, workflow, n, shape) {
  const warmup = L.num(args, 'warmup', 20);
  if (args.wait === 'on') return latencyByWait(api, args, workflow, n, shape, warmup);
  // Only the final events: the client asks the feed for what it waits for, as a BullMQ
  // client listens to 'completed' (the server skips the other types for this subscriber).
  const wsUrl = `${args.url.replace(/^http/, 'ws')}/api/v1/events?workflow=${workflow}` +
    '&types=execution.completed,execution.failed,execution.timed_out,execution.cancelled';
  const ws = new WebSocket(wsUrl, { headers: { Authorization: `Bearer ${api.token}` }, perMessageDeflate: false });
  const done = new Map(); // id -> time the feed said completed
  const waiting = new Map(); // id -> resolve
  await new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.type === 'ready') return resolve();
      if (!m.type || !m.type.startsWith('execution.')) return;
      const id = m.execution_id;
      if (m.type !== 'execution.completed') {
        if (['execution.failed', 'execution.timed_out', 'execution.cancelled'].includes(m.type)) {
          process.stderr.write(`baton.js: execution ${id}: ${m.type}\n`);
        }
        return;
      }
      const t = L.nowMs();
      const w = waiting.get(id);
      if (w) { waiting.delete(id); w(t); } else done.set(id, t);
    });
  });
  const samples = [];
  const feed = [];
  let byAnswer = 0;
  for (let i = 0; i < warmup + n; i++) {
    const t0 = L.nowMs();
    const r = await api.request('POST', '/api/v1/executions', { workflow, input: {} });
    if (r.status !== 201) throw new Error(`POST /api/v1/executions: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    const tAnswer = L.nowMs();
    const e = JSON.parse(r.text);
    if (e.status !== 'completed' && TERMINAL.has(e.status)) throw new Error(`execution ${e.id} ${e.status}`);
    // The feed's event is awaited in every case (its time is reported as feed_*).
    let tFeed;
    if (done.has(e.id)) { tFeed = done.get(e.id); done.delete(e.id); }
    else {
      let timer;
      tFeed = await Promise.race([
        new Promise((resolve) => waiting.set(e.id, resolve)),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no execution.completed for ${e.id} within 30 s`)), 30000); }),
      ]);
      clearTimeout(timer);
    }
    const inAnswer = e.status === 'completed';
    if (i >= warmup) {
      samples.push((inAnswer ? Math.min(tAnswer, tFeed) : tFeed) - t0);
      feed.push(tFeed - t0);
      byAnswer += inAnswer ? 1 : 0;
    }
  }
  ws.close();
  if (args.samples) require('fs').writeFileSync(args.samples, samples.map((v) => v.toFixed(3)).join('\n') + '\n');
  return {
    system: 'baton', shape, n, value: L.quantile(samples, 0.5), unit: 'ms',
    p50_ms: +L.quantile(samples, 0.5).toFixed(3), p99_ms: +L.quantile(samples, 0.99).toFixed(3),
    mean_ms: +(samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(3),
    feed_p50_ms: +L.quantile(feed, 0.5).toFixed(3), feed_p99_ms: +L.quantile(feed, 0.99).toFixed(3),
    completed_in_answer: byAnswer,
    method: 'POST /api/v1/executions -> its answer saying completed, or else execution.completed on WebSocket /api/v1/events?workflow=&types= (feed_*: the feed alone)',
  };
}

async function driver(args) {
  const shape = L.need(args, 'shape');
  const urls = L.need(args, 'url').split(',');
  if (urls.length > 1 && !['flows', 'jobs'].includes(shape)) {
    throw new Error(`shape ${shape} runs against one server, not ${urls.length}`);
  }
  const api = urls.length > 1
    ? new Spread(urls, L.need(args, 'token'), L.num(args, 'in-flight', 64))
    : new Api(urls[0], L.need(args, 'token'), L.num(args, 'in-flight', 64));
  let child = null;
  try {
    switch (shape) {
      case 'flows':
        await api.createWorkflow('bench-flow');
        return await throughput(api, args, 'bench-flow', L.num(args, 'n', 1000), 11, shape);
      case 'jobs':
        await api.createWorkflow('bench-noop');
        return await throughput(api, args, 'bench-noop', L.num(args, 'n', 20000), 1, shape);
      case 'latency':
        await api.createWorkflow('bench-noop');
        return await latency(api, args, 'bench-noop', L.num(args, 'n', 1000), shape);
      case 'worker-jobs':
        await api.createWorkflow('bench-cmd');
        child = await startWorker(args, api);
        return await throughput(api, args, 'bench-cmd', L.num(args, 'n', 20000), 1, shape);
      case 'worker-latency':
        await api.createWorkflow('bench-cmd');
        child = await startWorker(args, api);
        return await latency(api, args, 'bench-cmd', L.num(args, 'n', 1000), shape);
      default:
        throw new Error(`unknown shape '${shape}'`);
    }
  } finally {
    await stopWorker(child);
  }
}

// The connected worker: registers `bench.noop` over the WebSocket transport and answers each
// command at once with an accepted ack and a success result (no handler process). It says
// `batching` when it registers: a server that reads batch frames (its `registered` says so)
// gets the answers to one frame's commands in one frame, and may send several commands in
// one (docs/worker-protocol.md); an older server gets one message per frame.
async function worker(args) {
  const capacity = L.num(args, 'capacity', 50);
  const url = `${L.need(args, 'url').replace(/^http/, 'ws')}/api/v1/workers/connect`;
  const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${L.need(args, 'token')}` }, perMessageDeflate: false });
  let handled = 0;
  let beat = null;
  let batching = false;
  const send = (m) => ws.send(JSON.stringify(m));
  ws.on('open', () => send({
    type: 'register', workerId: `bench-${process.pid}`, capacity, commands: ['bench.noop'],
    sessionId: `bench-${process.pid}-${Date.now()}`, batching: args.batching !== 'off',
  }));
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    const messages = frame.type === 'batch' ? frame.messages : [frame];
    const answers = [];
    for (const m of messages) {
      if (m.type === 'command') {
        answers.push({ type: 'command.ack', assignmentId: m.assignmentId, status: 'accepted' });
        answers.push({ type: 'command.result', assignmentId: m.assignmentId, status: 'success', output: {} });
        handled++;
      } else if (m.type === 'registered') {
        batching = m.batching === true;
        beat = setInterval(() => send({ type: 'heartbeat', currentLoad: 0, capacity, status: 'ONLINE' }),
          Math.max(1000, m.heartbeatInterval || 30000));
        process.send('ready');
      } else if (m.type === 'error') {
        process.stderr.write(`baton worker: ${JSON.stringify(m)}\n`);
      }
    }
    if (batching && answers.length > 1) {
      for (let i = 0; i < answers.length; i += 1000) send({ type: 'batch', messages: answers.slice(i, i + 1000) });
    } else {
      answers.forEach(send);
    }
  });
  ws.on('error', (e) => { process.stderr.write(`baton worker: ${e.message}\n`); process.exit(1); });
  await new Promise((resolve) => {
    const stop = () => {
      clearInterval(beat);
      try { send({ type: 'deregister' }); } catch (_) { /* closing anyway */ }
      ws.close();
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('disconnect', stop);
    ws.on('close', resolve);
  });
  void handled;
}

L.runDriver(driver, worker);
