'use strict';
// Helpers shared by the drivers: arguments, clocks, quantiles, result lines.

const net = require('net');

// --key value / --flag arguments into an object (numbers stay strings; use num()).
function parseArgs(argv = process.argv.slice(2)) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument '${a}'`);
    const key = a.slice(2);
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) out[key] = argv[++i];
    else out[key] = true;
  }
  return out;
}

function num(args, key, dflt) {
  if (args[key] === undefined) return dflt;
  const v = Number(args[key]);
  if (!Number.isFinite(v)) throw new Error(`--${key} wants a number, got '${args[key]}'`);
  return v;
}

function need(args, key) {
  if (args[key] === undefined || args[key] === true) throw new Error(`--${key} is required`);
  return args[key];
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Nearest-rank quantile of an array of numbers (q in [0, 1]).
function quantile(values, q) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * s.length));
  return s[Math.min(s.length, rank) - 1];
}

// Polls `probe` (async -> boolean) every `everyMs` until true; throws after `timeoutMs`.
async function waitFor(probe, { everyMs = 20, timeoutMs = 300000, what = 'completion' } = {}) {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (nowMs() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// Runs `task(i)` for i in [0, n) with at most `inFlight` at once.
async function pool(n, inFlight, task) {
  let next = 0;
  const lanes = [];
  for (let l = 0; l < Math.min(inFlight, n); l++) {
    lanes.push((async () => {
      while (next < n) await task(next++);
    })());
  }
  await Promise.all(lanes);
}

// The one line a driver prints on stdout: run.sh collects these.
function emit(result) {
  process.stdout.write(JSON.stringify(result) + '\n');
}

// A free TCP port on 127.0.0.1 in [lo, hi], tried in random order.
async function freePort(lo = 27000, hi = 27999) {
  const ports = [];
  for (let p = lo; p <= hi; p++) ports.push(p);
  for (let i = ports.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ports[i], ports[j]] = [ports[j], ports[i]];
  }
  for (const p of ports) {
    const ok = await new Promise((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(p, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return p;
  }
  throw new Error(`no free port in ${lo}-${hi}`);
}

// Entry point wrapper: prints the error and exits non-zero.
function main(fn) {
  fn().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${process.argv[1]}: ${err && err.stack ? err.stack : err}\n`);
      process.exit(1);
    });
}

// Resolves when the parent stops this child process: SIGTERM, or its IPC channel closing.
function untilStopped() {
  return new Promise((resolve) => {
    process.on('SIGTERM', resolve);
    process.on('disconnect', resolve);
  });
}

// A driver file's entry point: `--role worker` runs `worker(args)`, anything else prints
// the one JSON line `driver(args)` returns.
function runDriver(driver, worker) {
  main(async () => {
    const args = parseArgs();
    if (args.role === 'worker') return worker(args);
    emit(await driver(args));
  });
}

module.exports = {
  parseArgs, num, need, nowMs, sleep, quantile, waitFor, pool, emit, freePort, main, untilStopped, runDriver,
};

if (require.main === module) {
  // `node lib.js freeport` prints a free port in 27000-27999 (used by run.sh).
  main(async () => {
    if (process.argv[2] !== 'freeport') throw new Error('usage: node lib.js freeport');
    process.stdout.write(`${await freePort()}\n`);
  });
}
