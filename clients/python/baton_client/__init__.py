"""A client for Baton's REST API: submit executions, wait for them, follow their
events, send signals. Standard library only (Python 3.8+).

    from baton_client import Client
    baton = Client()                      # $BATON_SERVER/$BATON_TOKEN, else the
                                          # credentials file `baton server` wrote
    run = baton.submit("deploy-model", input={"model_id": "llama-3-8b"})
    done = baton.wait(run["id"], timeout=600)
    print(done["status"], done["output"])

Errors from the server raise BatonError with the API's code ("NOT_FOUND",
"VALIDATION", ...), message and HTTP status.
"""

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Client", "BatonError", "TERMINAL_STATUSES", "credentials_path"]
__version__ = "0.1.0"

# An execution in one of these states changes no more.
TERMINAL_STATUSES = frozenset({"completed", "failed", "timeout", "cancelled"})
_FINAL_EVENTS = frozenset(
    {"execution.completed", "execution.failed", "execution.timed_out", "execution.cancelled"}
)


class BatonError(Exception):
    """The server refused a request, or could not be reached (code "IO_ERROR", status 0)."""

    def __init__(self, code, message, status=0, details=None):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.status = status
        self.details = details or {}


def credentials_path():
    """Where `baton server` writes the first admin token, as the CLI reads it:
    $BATON_CREDENTIALS, else $XDG_CONFIG_HOME/baton/credentials.json, else
    ~/.config/baton/credentials.json."""
    if os.environ.get("BATON_CREDENTIALS"):
        return os.environ["BATON_CREDENTIALS"]
    if os.environ.get("XDG_CONFIG_HOME"):
        return os.path.join(os.environ["XDG_CONFIG_HOME"], "baton", "credentials.json")
    return os.path.join(os.path.expanduser("~"), ".config", "baton", "credentials.json")


def _quote(part):
    return urllib.parse.quote(str(part), safe="")


class Client:
    """One Baton server. `server` and `token` default to $BATON_SERVER and $BATON_TOKEN,
    then to the credentials file. Thread-safe: each call is one HTTP request."""

    def __init__(self, server=None, token=None, timeout=30.0):
        server = server or os.environ.get("BATON_SERVER") or None
        token = token or os.environ.get("BATON_TOKEN") or None
        if server is None or token is None:
            try:
                with open(credentials_path(), encoding="utf-8") as f:
                    creds = json.load(f)
            except (OSError, ValueError) as e:
                raise BatonError(
                    "INVALID_ARGUMENT",
                    "no server given (server=, $BATON_SERVER) and no credentials file at %s: %s"
                    % (credentials_path(), e),
                ) from None
            server = server or creds.get("server")
            token = token or creds.get("token")
        if not server or not token:
            raise BatonError("INVALID_ARGUMENT", "a server URL and a token are needed")
        self.server = server.rstrip("/")
        self.token = token
        self.timeout = timeout

    # -- HTTP ---------------------------------------------------------------------------

    def request(self, method, path, body=None, content_type="application/json", timeout=None):
        """One request; returns the parsed JSON reply (None for 204). Raises BatonError.
        `timeout`: seconds for this request (default: the client's)."""
        data = None
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if body is not None:
            data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                text = resp.read()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                err = json.loads(text).get("error", {})
            except ValueError:
                err = {}
            raise BatonError(
                err.get("code", "HTTP_%d" % e.code),
                err.get("message", text.decode("utf-8", "replace")),
                e.code,
                err.get("details"),
            ) from None
        except (urllib.error.URLError, OSError) as e:
            raise BatonError("IO_ERROR", "%s: %s" % (self.server, e)) from None

    # -- Workflows ----------------------------------------------------------------------

    def create_workflow(self, definition):
        """Stores a workflow: YAML text, or a dict (sent as JSON). Returns the version."""
        if isinstance(definition, str):
            return self.request("POST", "/api/v1/workflows", definition, "application/yaml")
        return self.request("POST", "/api/v1/workflows", definition)

    # -- Executions ---------------------------------------------------------------------

    def submit(self, workflow, input=None, version=None, idempotency_key=None, priority=None,
               wait=None):
        """Starts an execution of a stored workflow; returns it ({"id", "status", ...}).
        The same idempotency_key returns the execution it started before. With `wait`
        (seconds, at most 60) the answer comes once the execution has ended, or when the
        wait passes (its status says which), and carries its "output"."""
        body = {"workflow": workflow}
        if input is not None:
            body["input"] = input
        if version is not None:
            body["version"] = version
        if idempotency_key is not None:
            body["idempotency_key"] = idempotency_key
        if priority is not None:
            body["priority"] = priority
        wait_ms = int(min(wait, 60.0) * 1000) if wait else 0
        if wait_ms <= 0:
            return self.request("POST", "/api/v1/executions", body)
        return self.request("POST", "/api/v1/executions?wait=%d" % wait_ms, body,
                            timeout=self.timeout + wait_ms / 1000.0)

    def submit_batch(self, executions):
        """Starts up to 1,000 executions in one request: each item as submit()'s keyword
        arguments in a dict ({"workflow": ..., "input": ...}). Returns the reply, whose
        "executions" are in the same order."""
        return self.request("POST", "/api/v1/executions/batch", {"executions": list(executions)})

    def get(self, execution_id):
        """An execution with its steps, attempts, output and error."""
        return self.request("GET", "/api/v1/executions/" + _quote(execution_id))

    def wait(self, execution_id, timeout=None, poll=0.05, max_poll=1.0):
        """Waits until the execution is terminal and returns it. Polls, from `poll`
        seconds doubling to `max_poll`. Raises BatonError("TIMEOUT") after `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            execution = self.get(execution_id)
            if execution.get("status") in TERMINAL_STATUSES:
                return execution
            if deadline is not None and time.monotonic() >= deadline:
                raise BatonError(
                    "TIMEOUT",
                    "execution %s still %s after %ss"
                    % (execution_id, execution.get("status"), timeout),
                )
            pause = poll if deadline is None else min(poll, max(0.0, deadline - time.monotonic()))
            time.sleep(pause)
            poll = min(poll * 2, max_poll)

    def run(self, workflow, input=None, timeout=None, **kwargs):
        """submit() then wait(): the finished execution. The submit itself waits for the
        end (up to 60 s, or `timeout`), so an execution is returned as soon as it ends."""
        hold = 60.0 if timeout is None else min(timeout, 60.0)
        started = time.monotonic()
        execution = self.submit(workflow, input=input, wait=hold, **kwargs)
        left = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
        return self.wait(execution["id"], timeout=left)

    def events(self, execution_id, after=0, follow=False, poll=0.1, timeout=None):
        """The execution's events in order (dicts with seq, type, step_id, data, time),
        from after `after`. follow=True keeps reading until the newest event is a final
        one (execution.completed, .failed, .timed_out, .cancelled): a retried execution
        has one per run."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last_type = None
        while True:
            page = self.request(
                "GET",
                "/api/v1/executions/%s/events?after=%d&limit=500" % (_quote(execution_id), after),
            )
            for event in page["events"]:
                after = event["seq"]
                last_type = event["type"]
                yield event
            if page.get("next_after") is not None:
                continue  # a full page: more is stored
            if not follow or last_type in _FINAL_EVENTS:
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise BatonError("TIMEOUT", "no final event of %s within %ss" % (execution_id, timeout))
            time.sleep(poll)

    def why(self, execution_id):
        """What each step that has not finished waits for."""
        return self.request("GET", "/api/v1/executions/%s/why" % _quote(execution_id))

    def signal(self, execution_id, name, payload=None):
        """Sends a signal; a `wait` step on it completes with `payload` as its output."""
        return self.request(
            "POST",
            "/api/v1/executions/%s/signals/%s" % (_quote(execution_id), _quote(name)),
            json.dumps(payload),
        )

    def cancel(self, execution_id, reason=None):
        body = {} if reason is None else {"reason": reason}
        return self.request("POST", "/api/v1/executions/%s/cancel" % _quote(execution_id), body)

    def pause(self, execution_id):
        return self.request("POST", "/api/v1/executions/%s/pause" % _quote(execution_id), {})

    def resume(self, execution_id):
        return self.request("POST", "/api/v1/executions/%s/resume" % _quote(execution_id), {})

    def retry(self, execution_id, from_step=None):
        """Runs a failed execution again, keeping completed steps (from_step: that step
        and everything after it run again)."""
        body = {} if from_step is None else {"from": from_step}
        return self.request("POST", "/api/v1/executions/%s/retry" % _quote(execution_id), body)

    def list(self, **filters):
        """Executions, newest first: status=, workflow=, limit=, cursor=..."""
        query = urllib.parse.urlencode({k: v for k, v in filters.items() if v is not None})
        return self.request("GET", "/api/v1/executions" + ("?" + query if query else ""))
