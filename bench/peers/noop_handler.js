#!/usr/bin/env node
'use strict';
// A persistent handler for `baton worker --persistent` (docs/worker-protocol.md,
// "Persistent handlers"): answers every command at once with an empty output.
const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.cancel) return; // a cancelled command has ended already
  process.stdout.write(`${JSON.stringify({ assignment_id: m.assignmentId, output: {} })}\n`);
});
