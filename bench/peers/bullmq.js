'use strict';
// BullMQ's side of the comparison, against a running Redis.
//
//   node bullmq.js --shape flows|jobs|latency|worker-jobs|worker-latency --redis-port P [--n N]
//                  [--variant always|everysec]   (a label: run.sh starts Redis with it)
//   node bullmq.js --role worker --redis-port P --queue Q [--concurrency 50]   (child process)
//
// Prints one JSON line: {system, shape, n, value, unit, ...}.

const { fork } = require('child_process');
const { Queue, Worker, FlowProducer, QueueEvents } = require('bullmq');
const L = require('./lib');

const noop = async () => ({});
const RUN = `${Date.now().toString(36)}`; // queue names unique to this run

function connection(args) {
  return { host: '127.0.0.1', port: L.num(args, 'redis-port') };
}

// A Worker in this process, or (`separate`) in a child process; resolves once it is ready.
async function startWorker(args, queueName, separate) {
  const concurrency = L.num(args, 'concurrency', 50);
  if (!separate) {
    const w = new Worker(queueName, noop, { connection: connection(args), concurrency });
    w.on('failed', (job, err) => process.stderr.write(`bullmq.js: job ${job && job.id} failed: ${err}\n`));
    await w.waitUntilReady();
    return { close: () => w.close() };
  }
  const child = fork(__filename, ['--role', 'worker', '--redis-port', String(args['redis-port']),
    '--queue', queueName, '--concurrency', String(concurrency)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((resolve, reject) => {
    child.once('message', (m) => (m === 'ready' ? resolve() : reject(new Error(`worker: ${m}`))));
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it was ready`)));
  });
  return {
    close: async () => {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

async function waitCompleted(queue, total) {
  let last = 0;
  await L.waitFor(async () => {
    last = await queue.getCompletedCount();
    if ((await queue.getFailedCount()) > 0) throw new Error('some jobs failed');
    return last >= total;
  }, { everyMs: 20, what: `${total} completed jobs (last ${last})` });
}

// flows: n flows of a parent ('join') with 10 children, FlowProducer.addBulk in chunks of
// 100 flows; one Worker (this process) runs children and parents.
async function flows(args, shape) {
  const n = L.num(args, 'n', 1000);
  const chunk = L.num(args, 'flow-chunk', 100);
  const queue = new Queue(`flows-${RUN}`, { connection: connection(args) });
  const producer = new FlowProducer({ connection: connection(args) });
  await queue.waitUntilReady();
  const w = await startWorker(args, `flows-${RUN}`, false);
  const flow = () => ({
    name: 'join', queueName: `flows-${RUN}`, data: {},
    children: Array.from({ length: 10 }, () => ({ name: 'child', queueName: `flows-${RUN}`, data: {} })),
  });
  const t0 = L.nowMs();
  for (let done = 0; done < n; done += chunk) {
    await producer.addBulk(Array.from({ length: Math.min(chunk, n - done) }, flow));
  }
  const tSubmitted = L.nowMs();
  await waitCompleted(queue, n * 11);
  const secs = (L.nowMs() - t0) / 1000;
  await w.close();
  await producer.close();
  await queue.close();
  return {
    shape, n, value: (n * 11) / secs, unit: 'steps/s', seconds: +secs.toFixed(3),
    submit_per_s: Math.round(n / ((tSubmitted - t0) / 1000)), submit: `FlowProducer.addBulk, ${chunk} flows a call`,
  };
}

// jobs: n one-step jobs, Queue.addBulk in chunks of 1,000; a Worker of concurrency 50, in
// this process (jobs) or another (worker-jobs).
async function jobs(args, shape, separate) {
  const n = L.num(args, 'n', 20000);
  const chunk = L.num(args, 'chunk', 1000);
  const queue = new Queue(`jobs-${RUN}`, { connection: connection(args) });
  await queue.waitUntilReady();
  const w = await startWorker(args, `jobs-${RUN}`, separate);
  const t0 = L.nowMs();
  for (let done = 0; done < n; done += chunk) {
    await queue.addBulk(Array.from({ length: Math.min(chunk, n - done) }, () => ({ name: 'noop', data: {} })));
  }
  const tSubmitted = L.nowMs();
  await waitCompleted(queue, n);
  const secs = (L.nowMs() - t0) / 1000;
  await w.close();
  await queue.close();
  return {
    shape, n, value: n / secs, unit: 'jobs/s', seconds: +secs.toFixed(3),
    submit_per_s: Math.round(n / ((tSubmitted - t0) / 1000)),
    submit: `Queue.addBulk, ${chunk} a call; worker ${separate ? 'in another process' : 'in-process'}`,
  };
}

// latency: one job at a time, Queue.add -> job.waitUntilFinished(QueueEvents).
async function latency(args, shape, separate) {
  const n = L.num(args, 'n', 1000);
  const warmup = L.num(args, 'warmup', 20);
  const queue = new Queue(`lat-${RUN}`, { connection: connection(args) });
  const events = new QueueEvents(`lat-${RUN}`, { connection: connection(args) });
  await queue.waitUntilReady();
  await events.waitUntilReady();
  const w = await startWorker(args, `lat-${RUN}`, separate);
  const samples = [];
  for (let i = 0; i < warmup + n; i++) {
    const t0 = L.nowMs();
    const job = await queue.add('noop', {});
    await job.waitUntilFinished(events, 30000);
    if (i >= warmup) samples.push(L.nowMs() - t0);
  }
  await w.close();
  await events.close();
  await queue.close();
  return {
    shape, n, value: L.quantile(samples, 0.5), unit: 'ms',
    p50_ms: +L.quantile(samples, 0.5).toFixed(3), p99_ms: +L.quantile(samples, 0.99).toFixed(3),
    mean_ms: +(samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(3),
    method: `Queue.add -> job.waitUntilFinished(QueueEvents); worker ${separate ? 'in another process' : 'in-process'}`,
  };
}

async function driver(args) {
  const shape = L.need(args, 'shape');
  let r;
  switch (shape) {
    case 'flows': r = await flows(args, shape); break;
    case 'jobs': r = await jobs(args, shape, false); break;
    case 'latency': r = await latency(args, shape, false); break;
    case 'worker-jobs': r = await jobs(args, shape, true); break;
    case 'worker-latency': r = await latency(args, shape, true); break;
    default: throw new Error(`unknown shape '${shape}'`);
  }
  return { system: `bullmq-${args.variant || 'always'}`, ...r };
}

async function worker(args) {
  const w = new Worker(L.need(args, 'queue'), noop,
    { connection: connection(args), concurrency: L.num(args, 'concurrency', 50) });
  w.on('failed', (job, err) => process.stderr.write(`bullmq worker: job ${job && job.id} failed: ${err}\n`));
  await w.waitUntilReady();
  process.send('ready');
  await L.untilStopped();
  await w.close();
}

L.runDriver(driver, worker);
