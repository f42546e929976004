#!/usr/bin/env python3
"""A Baton worker in plain Python (standard library only).

It speaks the HTTP long-poll transport of docs/worker-protocol.md, to show that a worker
can be written in any language that can send HTTP requests and parse JSON:

    python3 baton_worker.py --server http://127.0.0.1:8080 --token bt_... --id py-1

The worker:
  - registers (POST /api/v1/workers/register) with the commands it has handlers for;
  - polls for work (GET /api/v1/workers/{id}/poll?wait=MS), in its own thread;
  - heartbeats every `heartbeatInterval` the server gave, in another thread;
  - runs each command in a thread of its own, up to --capacity at once: it acks
    `accepted`, or `rejected` when it is full or draining (the server then sends the
    command elsewhere), then posts progress and the result; what several commands have
    to say at once goes in one POST .../batch;
  - on `command.cancel`, or a 409 STALE_ASSIGNMENT (the work was given to another
    worker), sets the command's `cancelled` flag, which handlers check, and sends
    nothing more for it;
  - registers again when the server answers 404 (it restarted and forgot us), and
    retries with backoff while the server is unreachable; a refused token (401, 403)
    or registration (400, 409: a bad or taken id) exits 1;
  - on SIGTERM or Ctrl-C drains: a DRAINING heartbeat, new commands rejected, running
    ones finish and are reported, then POST .../deregister and exit 0. A second signal
    exits 1 at once.

The same file is also a persistent handler of `baton worker --persistent` (which sets
BATON_PERSISTENT=1): it then serves HANDLERS over stdin/stdout JSON lines and leaves the
connection to baton worker:

    baton worker --server http://127.0.0.1:8080 --token bt_... --persistent \
        --handler checksum=./baton_worker.py --handler count=./baton_worker.py

Handlers are plain functions in HANDLERS below: they get a Job (the command's data,
resource and checkpoint, a progress() method and a `cancelled` flag) and return the
step's output (any JSON value), or raise HandlerError to fail the attempt.
"""

import argparse
import hashlib
import http.client
import json
import os
import random
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

# --------------------------------------------------------------------------------------
# Handlers: what this worker can do. The server only sends a worker the commands it
# registered, and this worker registers the names of this dict.


class HandlerError(Exception):
    """Fails the attempt with an error code; retryable=False skips the step's retries."""

    def __init__(self, code, message, retryable=True, details=None):
        super().__init__(message)
        self.code = code
        self.retryable = retryable
        self.details = details or {}


def checksum(job):
    """data: {"text": "..."} -> {"sha256": hex digest of its UTF-8 bytes, "length": bytes}."""
    text = (job.data or {}).get("text") if isinstance(job.data, dict) else None
    if not isinstance(text, str):
        raise HandlerError("BAD_INPUT", "data.text must be a string", retryable=False)
    raw = text.encode("utf-8")
    return {"sha256": hashlib.sha256(raw).hexdigest(), "length": len(raw)}


def count(job):
    """data: {"to": N} -> counts to N, one progress report with a checkpoint per step.

    The checkpoint {"i": done} is what makes the work resumable: when the server moves
    the command to another worker (this one died mid-way), it sends the last checkpoint
    along and the count goes on from there instead of starting over.
    """
    to = (job.data or {}).get("to") if isinstance(job.data, dict) else None
    if not isinstance(to, int) or isinstance(to, bool) or to < 0:
        raise HandlerError("BAD_INPUT", "data.to must be a non-negative integer", retryable=False)
    start = (job.checkpoint or {}).get("i", 0)
    for i in range(start, to):
        if job.cancelled:
            return None  # cancelled or reassigned: nobody wants the result any more
        job.progress(100 * (i + 1) // to, checkpoint={"i": i + 1})
    return {"counted": to, "resumedFrom": start}


HANDLERS = {
    "checksum": checksum,
    "count": count,
}

# --------------------------------------------------------------------------------------
# The HTTP client: one JSON request, one JSON answer.


class ApiError(Exception):
    """The server answered with an error: {"error": {"code", "message", ...}}."""

    def __init__(self, status, code, message):
        super().__init__(f"{code}: {message} (HTTP {status})")
        self.status = status
        self.code = code


class Unreachable(Exception):
    """No answer at all: connection refused or reset, timeout."""


class Api:
    def __init__(self, server, token):
        self.server = server.rstrip("/")
        self.token = token

    def call(self, method, path, body=None, timeout=10.0):
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.server + path,
            data=data,
            method=method,
            headers={"Authorization": "Bearer " + self.token, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as e:  # an answer, but not 2xx
            try:
                error = json.loads(e.read()).get("error", {})
            except (ValueError, AttributeError, OSError):
                error = {}
            code = error.get("code", f"HTTP_{e.code}")
            raise ApiError(e.code, code, error.get("message", e.reason)) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
            raise Unreachable(str(getattr(e, "reason", e)) or type(e).__name__) from None


# Statuses of the errors a message of a batch may get, as its own route would answer.
BATCH_ERROR_STATUS = {"STALE_ASSIGNMENT": 409, "NOT_FOUND": 404, "CONFLICT": 409}
MAX_BATCH = 1000  # messages per POST .../batch (docs/worker-protocol.md)


class Outbox:
    """Sends the worker's acks, progress and results, several per request when busy.

    Each sender waits for its own answer, as with a request of its own. The first one to
    arrive sends at once (an idle worker adds no latency); messages that arrive while a
    request is on the wire go together in the next one, as one POST .../batch."""

    ROUTES = {"command.ack": "ack", "command.progress": "progress", "command.result": "result"}

    def __init__(self, api, path):
        self.api = api
        self.path = path
        self.changed = threading.Condition()
        self.waiting = []  # entries not yet sent: {"message", "answer"}, oldest first
        self.sending = False  # a request is on the wire

    def send(self, message):
        """Returns the server's answer to `message`; raises ApiError or Unreachable."""
        entry = {"message": message}
        with self.changed:
            self.waiting.append(entry)
            while "answer" not in entry:
                if self.sending:
                    self.changed.wait()
                    continue
                # Nobody is sending: this thread sends what is waiting, its own included.
                group, self.waiting = self.waiting[:MAX_BATCH], self.waiting[MAX_BATCH:]
                self.sending = True
                self.changed.release()
                try:
                    answers = self.deliver([e["message"] for e in group])
                except Exception as e:  # a bug here must not leave the others waiting
                    answers = [e] * len(group)
                finally:
                    self.changed.acquire()
                    self.sending = False
                for e, answer in zip(group, answers):
                    e["answer"] = answer
                self.changed.notify_all()
        if isinstance(entry["answer"], Exception):
            raise entry["answer"]
        return entry["answer"]

    def deliver(self, messages):
        try:
            if len(messages) == 1:
                body = dict(messages[0])
                route = self.ROUTES[body.pop("type")]
                return [self.api.call("POST", self.path(route), body)]
            reply = self.api.call("POST", self.path("batch"),
                                  {"type": "batch", "messages": messages})
        except (ApiError, Unreachable) as e:
            return [e] * len(messages)
        answers = []
        for result in reply.get("results", []):
            error = result.get("error")
            if error:
                code = error.get("code", "UNKNOWN")
                answers.append(ApiError(BATCH_ERROR_STATUS.get(code, 400), code,
                                        error.get("message", "")))
            else:
                answers.append(result)
        # Nothing after a deregister is handled; this worker never batches one.
        missing = Unreachable("the server did not answer this message of the batch")
        return answers + [missing] * (len(messages) - len(answers))


def log(message):
    print(time.strftime("%H:%M:%S"), "baton_worker:", message, file=sys.stderr, flush=True)


class Backoff:
    """Delays between retries: 0.5 s doubling up to 30 s, each jittered to 50-100%."""

    def __init__(self):
        self.delay = 0.5

    def next(self):
        delay = random.uniform(self.delay / 2, self.delay)
        self.delay = min(self.delay * 2, 30.0)
        return delay

    def reset(self):
        self.delay = 0.5


# --------------------------------------------------------------------------------------
# The worker.


# Why a command stops when the server answers 409 STALE_ASSIGNMENT about it.
TAKEN_BACK = "the server took this work back (cancelled, reassigned or timed out)"


class Job:
    """One command being run: what the handler sees."""

    def __init__(self, worker, message):
        self._worker = worker
        self._stopped = threading.Event()
        self.message = message  # the whole `command` message
        self.assignment_id = message["assignmentId"]
        self.command = message["command"]
        self.data = message.get("data")
        self.resource = message.get("resource")
        self.checkpoint = message.get("checkpoint")  # set when resuming another worker's work
        self.execution = message.get("execution") or {}

    @property
    def cancelled(self):
        """True once the server cancelled this work or gave it to another worker."""
        return self._stopped.is_set()

    def stop(self, why):
        if not self._stopped.is_set():
            log(f"stopping {self.assignment_id}: {why}")
        self._stopped.set()

    def progress(self, percent, checkpoint=None, data=None):
        """Reports progress (0-100); the checkpoint is kept by the server for a resume."""
        if not self.cancelled:
            self._worker.send_progress(self, percent, checkpoint, data)


class Worker:
    def __init__(self, api, worker_id, capacity, tags, node):
        self.api = api
        self.id = worker_id
        self.capacity = capacity
        self.tags = tags
        self.node = node
        self.heartbeat_interval = 30.0  # seconds; the server's value once registered
        self.heartbeat_timeout = 60.0

        self.lock = threading.Lock()
        self.jobs_changed = threading.Condition(self.lock)
        self.jobs = {}  # assignmentId -> Job, from accepted until its result is sent
        self.registered = False
        self.draining = False
        # Held while registering and deregistering, so that a re-registration cannot
        # slip in after the final deregister.
        self.session_lock = threading.Lock()
        self.stopping = False  # deregistered: the threads end
        self.stopped = threading.Event()  # wakes the threads' waits when stopping
        self.finished = threading.Event()  # the worker gave up by itself (refused token)
        self.exit_code = 0
        self.outbox = Outbox(api, self.path)

    def path(self, what):
        return f"/api/v1/workers/{self.id}/{what}"

    # -- registration and heartbeats ---------------------------------------------------

    def register(self):
        with self.session_lock:
            if self.stopping:
                return
            reply = self.api.call("POST", "/api/v1/workers/register", {
                "workerId": self.id,
                "nodeId": self.node,
                "host": os.uname().nodename,
                "capacity": self.capacity,
                "commands": sorted(HANDLERS),
                "tags": self.tags,
            })
            self.heartbeat_interval = reply["heartbeatInterval"] / 1000
            self.heartbeat_timeout = reply["heartbeatTimeout"] / 1000
            self.registered = True
        log(f"registered as {self.id} (commands: {', '.join(sorted(HANDLERS))}; "
            f"heartbeat every {self.heartbeat_interval:g}s)")
        if self.draining:
            self.heartbeat()  # registering again mid-drain: say so at once

    def heartbeat(self):
        with self.lock:
            load = len(self.jobs)
        self.api.call("POST", self.path("heartbeat"), {
            "currentLoad": load,
            "capacity": self.capacity,
            "status": "DRAINING" if self.draining else "ONLINE",
        })

    def heartbeat_loop(self):
        while not self.stopped.wait(self.heartbeat_interval):
            if not self.registered:
                continue
            try:
                self.heartbeat()
            except (ApiError, Unreachable) as e:
                log(f"heartbeat failed: {e}")  # the poll loop deals with reconnecting

    # -- polling ---------------------------------------------------------------------

    def poll_loop(self):
        backoff = Backoff()
        while not self.stopping:
            try:
                if not self.registered:
                    self.register()
                    backoff.reset()
                    continue
                # A poll counts as a heartbeat: never wait longer than half the timeout.
                wait_ms = int(min(25.0, self.heartbeat_timeout / 2) * 1000)
                reply = self.api.call("GET", self.path(f"poll?wait={wait_ms}"),
                                      timeout=wait_ms / 1000 + 15)
                backoff.reset()
                for message in reply.get("messages", []):
                    self.on_message(message)
                continue
            except ApiError as e:
                if self.stopping:
                    return  # deregistered: the parked poll is answered with an error
                if e.status in (401, 403):
                    return self.give_up(f"the server refused the token: {e}")
                if e.status in (400, 409):  # a bad --id or --capacity; the id is taken
                    return self.give_up(f"the server refused worker '{self.id}': {e}")
                if e.status == 404:  # it restarted and forgot us, or declared us gone
                    self.registered = False
                    backoff.reset()  # it is up: register again soon
                    problem = "the server does not know this worker"
                else:
                    problem = str(e)
            except Unreachable as e:
                problem = f"server unreachable: {e}"
            delay = backoff.next()
            log(f"{problem}; {'retrying' if self.registered else 'registering'} in {delay:.1f}s")
            self.stopped.wait(delay)

    def give_up(self, why):
        log(why)
        self.exit_code = 1
        self.finished.set()

    def on_message(self, message):
        kind = message.get("type")
        if kind == "command":
            self.on_command(message)
        elif kind == "command.cancel":
            with self.lock:
                job = self.jobs.get(message.get("assignmentId"))
            if job:
                job.stop(f"cancelled ({message.get('reason', 'no reason given')})")
        else:
            log(f"ignoring a message of type {kind!r}")  # unknown types: forward compatible

    def on_command(self, message):
        assignment = message["assignmentId"]
        start = None
        with self.lock:
            if assignment in self.jobs:
                verdict = "accepted"  # sent again after a re-registration: already running
            elif self.draining or len(self.jobs) >= self.capacity:
                verdict = "rejected"
            else:
                verdict = "accepted"
                start = self.jobs[assignment] = Job(self, message)
        try:
            self.outbox.send({"type": "command.ack", "assignmentId": assignment,
                              "status": verdict})
        except ApiError as e:
            if e.code == "STALE_ASSIGNMENT" and start:
                return self.forget(start, TAKEN_BACK)
            log(f"ack of {assignment} failed: {e}")  # it is sent again if it matters
        except Unreachable as e:
            log(f"ack of {assignment} failed: {e}")
        if verdict == "rejected":
            log(f"rejected {assignment} {message.get('command')}: "
                f"{'draining' if self.draining else 'at capacity'}")
        if start:
            threading.Thread(target=self.run_job, args=(start,), daemon=True).start()

    # -- running commands --------------------------------------------------------------

    def run_job(self, job):
        log(f"started {job.assignment_id} {job.command}")
        handler = HANDLERS.get(job.command)
        try:
            if handler is None:
                raise HandlerError("UNKNOWN_COMMAND", f"no handler for {job.command!r}",
                                   retryable=False)
            result = {"status": "success", "output": handler(job)}
        except HandlerError as e:
            error = {"code": e.code, "message": str(e), "details": e.details,
                     "retryable": e.retryable}
            result = {"status": "failure", "error": error}
        except Exception as e:  # a bug in a handler fails the attempt, not the worker
            error = {"code": "HANDLER_EXCEPTION", "message": f"{type(e).__name__}: {e}"}
            result = {"status": "failure", "error": error}
        if not job.cancelled:
            self.send_result(job, result)
        self.forget(job)

    def forget(self, job, why=None):
        if why:
            job.stop(why)
        with self.lock:
            self.jobs.pop(job.assignment_id, None)
            self.jobs_changed.notify_all()

    def send_progress(self, job, percent, checkpoint, data):
        body = {"type": "command.progress", "assignmentId": job.assignment_id,
                "progress": percent}
        if checkpoint is not None:
            body["checkpoint"] = checkpoint
        if data is not None:
            body["data"] = data
        try:
            self.outbox.send(body)
        except ApiError as e:
            if e.code == "STALE_ASSIGNMENT":
                job.stop(TAKEN_BACK)
            else:
                log(f"progress of {job.assignment_id} not sent: {e}")
        except Unreachable as e:
            log(f"progress of {job.assignment_id} not sent: {e}")  # the next one may be

    def send_result(self, job, result):
        """Sends the result until the server has it: a result is never dropped."""
        body = dict(result, type="command.result", assignmentId=job.assignment_id)
        backoff = Backoff()
        while not job.cancelled:
            try:
                self.outbox.send(body)
                log(f"finished {job.assignment_id} {job.command}: {result['status']}")
                return
            except ApiError as e:
                if e.code == "STALE_ASSIGNMENT":
                    return job.stop(TAKEN_BACK)
                problem = str(e)  # 404: not registered (yet) again; the poll loop is on it
            except Unreachable as e:
                problem = f"server unreachable: {e}"
            delay = backoff.next()
            log(f"result of {job.assignment_id} not sent ({problem}); retrying in {delay:.1f}s")
            time.sleep(delay)

    # -- lifecycle ---------------------------------------------------------------------

    def start(self):
        threading.Thread(target=self.poll_loop, name="poll", daemon=True).start()
        threading.Thread(target=self.heartbeat_loop, name="heartbeat", daemon=True).start()

    def drain(self):
        """No new work; waits for the running commands, then deregisters."""
        with self.lock:
            self.draining = True
            running = len(self.jobs)
        log(f"draining: no new work, waiting for {running} running command(s)")
        if self.registered:
            try:
                self.heartbeat()  # status DRAINING: the server stops sending us work
            except (ApiError, Unreachable) as e:
                log(f"heartbeat failed: {e}")
        with self.lock:
            while self.jobs:
                self.jobs_changed.wait()
        with self.session_lock:
            self.stopping = True
            if self.registered:
                try:
                    self.api.call("POST", self.path("deregister"), {})
                    log("drain finished: deregistered")
                except (ApiError, Unreachable) as e:
                    log(f"drain finished; deregister failed: {e}")
        self.stopped.set()


# --------------------------------------------------------------------------------------


class Signalled(Exception):
    pass


def on_signal(signum, _frame):
    # Runs in the main thread, which only waits (below): raising there interrupts the
    # wait, the way Ctrl-C raises KeyboardInterrupt.
    raise Signalled(signal.Signals(signum).name)


def parse_args(argv):
    p = argparse.ArgumentParser(description="A Baton worker over HTTP long-poll (example).")
    p.add_argument("--server", default=os.environ.get("BATON_SERVER"),
                   help="the server's URL, e.g. http://127.0.0.1:8080 (default: $BATON_SERVER)")
    p.add_argument("--token", default=os.environ.get("BATON_TOKEN"),
                   help="a token with the worker scope (default: $BATON_TOKEN)")
    p.add_argument("--id", required=True, help="this worker's id: 1-100 of [A-Za-z0-9._-]")
    p.add_argument("--capacity", type=int, default=1, help="commands run at once (default 1)")
    p.add_argument("--tags", default="", help="comma-separated tags, e.g. gpu,a100")
    p.add_argument("--node", help="the node's id (default: the worker's id)")
    args = p.parse_args(argv)
    if not args.server:
        p.error("--server URL (or $BATON_SERVER) is required")
    if not args.token:
        p.error("--token (or $BATON_TOKEN) is required")
    if args.capacity < 1:
        p.error("--capacity must be at least 1")
    return args


# --------------------------------------------------------------------------------------
# The same HANDLERS as a persistent handler of `baton worker --persistent` (started with
# BATON_PERSISTENT=1): commands arrive as JSON lines on stdin, answers leave as JSON lines
# on stdout, and baton worker does the HTTP/WebSocket side. See docs/worker-protocol.md,
# "Persistent handlers".


class StdioAnswers:
    """Writes answer lines; one line at a time, whichever thread a handler runs on."""

    def __init__(self):
        self._lock = threading.Lock()

    def send(self, body):
        line = json.dumps(body)
        with self._lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def send_progress(self, job, percent, checkpoint, data):  # what Job.progress() calls
        body = {"assignment_id": job.assignment_id, "progress": percent}
        if checkpoint is not None:
            body["checkpoint"] = checkpoint
        if data is not None:
            body["data"] = data
        self.send(body)


def serve_stdio():
    answers = StdioAnswers()
    running = {}  # assignment id -> Job

    def run(job):
        answer = {"assignment_id": job.assignment_id}
        try:
            answer["output"] = HANDLERS[job.command](job)
        except HandlerError as e:
            answer["error"] = {"code": e.code, "message": str(e), "retryable": e.retryable,
                               "details": e.details}
        except Exception as e:  # a bug in a handler fails the attempt, not the process
            answer["error"] = {"code": "HANDLER_CRASHED", "message": f"{type(e).__name__}: {e}"}
        running.pop(job.assignment_id, None)
        if not job.cancelled:  # a cancelled command has ended: nobody wants its answer
            answers.send(answer)

    for line in sys.stdin:
        message = json.loads(line)
        if "cancel" in message:
            job = running.get(message["cancel"])
            if job is not None:
                job.stop(message.get("reason", "cancelled"))
            continue
        job = Job(answers, message)
        if job.command not in HANDLERS:
            answers.send({"assignment_id": job.assignment_id, "error": {
                "code": "NO_HANDLER", "message": f"no handler for '{job.command}'"}})
            continue
        running[job.assignment_id] = job
        threading.Thread(target=run, args=(job,), daemon=True).start()
    return 0


def main(argv):
    if os.environ.get("BATON_PERSISTENT") == "1":
        return serve_stdio()
    args = parse_args(argv)
    tags = [t for t in args.tags.split(",") if t]
    api = Api(args.server, args.token)
    worker = Worker(api, args.id, args.capacity, tags, args.node or args.id)
    try:
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        worker.start()
        worker.finished.wait()  # only a refused token ends the worker by itself
        return worker.exit_code
    except Signalled as s:
        log(f"{s}: draining (signal again to stop at once)")
    try:
        worker.drain()
        return 0
    except Signalled:
        log(f"stopping now: {len(worker.jobs)} running command(s) abandoned")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
