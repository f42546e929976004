'use strict';
// graphile-worker's side of the comparison, against a running PostgreSQL (an empty database).
//
//   node graphile.js --shape flows|jobs|latency|worker-jobs|worker-latency --db postgres://... [--n N]
//   node graphile.js --role worker --db postgres://... [--concurrency 50]   (child process)
//
// Prints one JSON line: {system, shape, n, value, unit, ...}. `flows` prints value null
// ("n/a"): graphile-worker has no parent/child jobs.

process.env.NO_LOG_SUCCESS = '1'; // no "Completed task ..." line per job
const { fork } = require('child_process');
const { Client } = require('pg');
const { run, makeWorkerUtils, Logger } = require('graphile-worker');
const L = require('./lib');

const logger = new Logger(() => (level, message) => {
  if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
});
const taskList = { noop: async () => {} };

async function startRunner(args, separate) {
  const concurrency = L.num(args, 'concurrency', 50);
  if (!separate) {
    const runner = await run({
      connectionString: L.need(args, 'db'), concurrency, noHandleSignals: true, logger, taskList,
    });
    return { close: () => runner.stop() };
  }
  const child = fork(__filename, ['--role', 'worker', '--db', L.need(args, 'db'), '--concurrency', String(concurrency)],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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

// jobs: n jobs, WorkerUtils.addJobs in chunks of 1,000; run() with concurrency 50 in this
// process (jobs) or another (worker-jobs). A job is complete when its row is deleted
// (committed): polled as count(*) of graphile_worker._private_jobs every 20 ms.
async function jobs(args, utils, shape, separate) {
  const n = L.num(args, 'n', 20000);
  const chunk = L.num(args, 'chunk', 1000);
  const client = new Client({ connectionString: args.db });
  await client.connect();
  const runner = await startRunner(args, separate);
  const t0 = L.nowMs();
  for (let done = 0; done < n; done += chunk) {
    await utils.addJobs(Array.from({ length: Math.min(chunk, n - done) }, () => ({ identifier: 'noop', payload: {} })));
  }
  const tSubmitted = L.nowMs();
  let left = -1;
  await L.waitFor(async () => {
    left = Number((await client.query('select count(*) as c from graphile_worker._private_jobs')).rows[0].c);
    return left === 0;
  }, { everyMs: 20, what: `the jobs table to empty (${left} left)` });
  const secs = (L.nowMs() - t0) / 1000;
  await runner.close();
  await client.end();
  return {
    shape, n, value: n / secs, unit: 'jobs/s', seconds: +secs.toFixed(3),
    submit_per_s: Math.round(n / ((tSubmitted - t0) / 1000)),
    submit: `WorkerUtils.addJobs, ${chunk} a call; runner ${separate ? 'in another process' : 'in-process'}`,
  };
}

// latency: one job at a time, addJob -> a NOTIFY from an AFTER DELETE trigger on the jobs
// table (graphile-worker deletes a job's row when it completes), heard on a LISTEN
// connection opened before the first sample.
async function latency(args, utils, shape, separate) {
  const n = L.num(args, 'n', 1000);
  const warmup = L.num(args, 'warmup', 20);
  const client = new Client({ connectionString: args.db });
  await client.connect();
  await client.query(`
    create or replace function public.bench_job_done() returns trigger language plpgsql as $$
    begin perform pg_notify('bench_job_done', old.id::text); return old; end $$;
    drop trigger if exists bench_job_done on graphile_worker._private_jobs;
    create trigger bench_job_done after delete on graphile_worker._private_jobs
      for each row execute function public.bench_job_done();`);
  const seen = new Map();
  const waiting = new Map();
  client.on('notification', (msg) => {
    const t = L.nowMs();
    const w = waiting.get(msg.payload);
    if (w) { waiting.delete(msg.payload); w(t); } else seen.set(msg.payload, t);
  });
  await client.query('listen bench_job_done');
  const runner = await startRunner(args, separate);
  const samples = [];
  for (let i = 0; i < warmup + n; i++) {
    const t0 = L.nowMs();
    const job = await utils.addJob('noop', {});
    const id = String(job.id);
    let t1;
    if (seen.has(id)) { t1 = seen.get(id); seen.delete(id); }
    else {
      let timer;
      t1 = await Promise.race([
        new Promise((resolve) => waiting.set(id, resolve)),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`job ${id} not completed within 30 s`)), 30000); }),
      ]);
      clearTimeout(timer);
    }
    if (i >= warmup) samples.push(t1 - t0);
  }
  await runner.close();
  await client.end();
  return {
    shape, n, value: L.quantile(samples, 0.5), unit: 'ms',
    p50_ms: +L.quantile(samples, 0.5).toFixed(3), p99_ms: +L.quantile(samples, 0.99).toFixed(3),
    mean_ms: +(samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(3),
    method: `addJob -> NOTIFY from an AFTER DELETE trigger on _private_jobs; runner ${separate ? 'in another process' : 'in-process'}`,
  };
}

async function driver(args) {
  const shape = L.need(args, 'shape');
  if (shape === 'flows') {
    return { system: 'graphile', shape, n: 0, value: null, unit: 'steps/s', note: 'n/a: no parent/child jobs' };
  }
  const utils = await makeWorkerUtils({ connectionString: L.need(args, 'db'), logger });
  await utils.migrate();
  let r;
  try {
    switch (shape) {
      case 'jobs': r = await jobs(args, utils, shape, false); break;
      case 'latency': r = await latency(args, utils, shape, false); break;
      case 'worker-jobs': r = await jobs(args, utils, shape, true); break;
      case 'worker-latency': r = await latency(args, utils, shape, true); break;
      default: throw new Error(`unknown shape '${shape}'`);
    }
  } finally {
    await utils.release();
  }
  return { system: 'graphile', ...r };
}

async function worker(args) {
  const runner = await run({
    connectionString: L.need(args, 'db'), concurrency: L.num(args, 'concurrency', 50),
    noHandleSignals: true, logger, taskList,
  });
  process.send('ready');
  await L.untilStopped();
  await runner.stop();
}

L.runDriver(driver, worker);
