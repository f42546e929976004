"""baton_client against a real `baton server` (the binary in $BATON_BIN), started on a
free loopback port in a temporary directory and stopped after the tests."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from baton_client import BatonError, Client  # noqa: E402

GREET = """
name: greet
inputs: {who: {type: string, required: true}}
steps:
  - {id: hello, type: shell, run: [echo, "hello {{ inputs.who }}"]}
output: {said: "{{ steps.hello.output }}"}
"""

APPROVAL = """
name: approval
steps:
  - {id: approve, type: wait, signal: approve}
  - {id: after, type: noop, depends_on: [approve]}
output: {by: "{{ steps.approve.output.by }}"}
"""

SLOW = """
name: slow
timeout: 300ms
steps:
  - {id: nap, type: wait, duration: 1h}
"""

BROKEN = """
name: broken
steps:
  - {id: load, type: shell, run: "echo no warehouse >&2; exit 3"}
"""


class ServerFixture:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="baton-pyclient-")
        self.credentials = os.path.join(self.dir, "credentials.json")
        binary = os.environ.get("BATON_BIN", "baton")
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(
            [binary, "server", "--listen", "127.0.0.1:0", "--db",
             os.path.join(self.dir, "baton.db"), "--credentials", self.credentials],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while not os.path.exists(self.credentials):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start: " + self.read_log())
            time.sleep(0.05)
        with open(self.credentials) as f:
            creds = json.load(f)
        self.url, self.token = creds["server"], creds["token"]

    def read_log(self):
        with open(os.path.join(self.dir, "server.log"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerFixture()
        cls.baton = Client(cls.server.url, cls.server.token)
        for definition in (GREET, APPROVAL, SLOW, BROKEN):
            cls.baton.create_workflow(definition)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_submit_wait_and_read_the_output(self):
        run = self.baton.submit("greet", input={"who": "ana"})
        self.assertIn(run["status"], ("pending", "running"))
        done = self.baton.wait(run["id"], timeout=30)
        self.assertEqual(done["status"], "completed")
        self.assertEqual(done["output"], {"said": "hello ana"})
        self.assertEqual(self.baton.run("greet", input={"who": "bo"}, timeout=30)["output"],
                         {"said": "hello bo"})

    def test_a_submit_can_wait_for_the_end(self):
        done = self.baton.submit("greet", input={"who": "cy"}, wait=30)
        self.assertEqual(done["status"], "completed")
        self.assertEqual(done["output"], {"said": "hello cy"})
        with self.assertRaises(BatonError) as e:
            self.baton.request("POST", "/api/v1/executions?wait=61000", {"workflow": "greet"})
        self.assertEqual(e.exception.code, "VALIDATION")

    def test_the_credentials_file_is_found_as_the_cli_finds_it(self):
        saved = {k: os.environ.get(k) for k in ("BATON_SERVER", "BATON_TOKEN", "BATON_CREDENTIALS")}
        try:
            os.environ.pop("BATON_SERVER", None)
            os.environ.pop("BATON_TOKEN", None)
            os.environ["BATON_CREDENTIALS"] = self.server.credentials
            client = Client()
            self.assertEqual(client.server, self.server.url)
            self.assertEqual(client.get(self.baton.submit("greet", input={"who": "x"})["id"])
                             ["workflow"], "greet")
            os.environ["BATON_CREDENTIALS"] = os.path.join(self.server.dir, "missing.json")
            with self.assertRaises(BatonError) as e:
                Client()
            self.assertIn("missing.json", e.exception.message)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_follow_events_until_the_execution_finishes(self):
        run = self.baton.submit("greet", input={"who": "cy"})
        types = [e["type"] for e in self.baton.events(run["id"], follow=True, timeout=30)]
        self.assertEqual(types[0], "execution.started")
        self.assertEqual(types[-1], "execution.completed")
        self.assertIn("step.completed", types)
        seqs = [e["seq"] for e in self.baton.events(run["id"])]
        self.assertEqual(seqs, sorted(seqs))
        self.assertEqual(len(seqs), len(types))

    def test_a_signal_completes_the_step_waiting_for_it(self):
        run = self.baton.submit("approval")
        deadline = time.monotonic() + 30
        while not any(s.get("signal") == "approve" for s in self.baton.why(run["id"])["steps"]):
            self.assertLess(time.monotonic(), deadline, "the wait step never waited")
            time.sleep(0.05)
        self.baton.signal(run["id"], "approve", {"by": "ana"})
        done = self.baton.wait(run["id"], timeout=30)
        self.assertEqual(done["status"], "completed")
        self.assertEqual(done["output"], {"by": "ana"})

    def test_failures_and_refusals_are_errors_with_the_apis_code(self):
        failed = self.baton.run("broken", timeout=30)
        self.assertEqual(failed["status"], "failed")
        self.assertEqual(failed["error"]["code"], "EXIT_NONZERO")
        with self.assertRaises(BatonError) as e:
            self.baton.submit("no-such-workflow")
        self.assertEqual(e.exception.code, "NOT_FOUND")
        self.assertEqual(e.exception.status, 404)
        with self.assertRaises(BatonError) as e:
            self.baton.submit("greet", input={})
        self.assertEqual(e.exception.code, "VALIDATION")
        with self.assertRaises(BatonError) as e:
            Client(self.server.url, "bt_not_a_token").get("x")
        self.assertEqual(e.exception.code, "UNAUTHORIZED")
        with self.assertRaises(BatonError) as e:
            Client("http://127.0.0.1:1", "t", timeout=5).get("x")
        self.assertEqual(e.exception.code, "IO_ERROR")

    def test_wait_returns_an_execution_that_timed_out(self):
        done = self.baton.run("slow", timeout=30)
        self.assertEqual(done["status"], "timeout")
        self.assertEqual(done["error"]["code"], "TIMEOUT")

    def test_idempotency_key_and_batch(self):
        a = self.baton.submit("greet", input={"who": "dee"}, idempotency_key="order-7")
        b = self.baton.submit("greet", input={"who": "dee"}, idempotency_key="order-7")
        self.assertEqual(a["id"], b["id"])
        reply = self.baton.submit_batch(
            [{"workflow": "greet", "input": {"who": str(i)}} for i in range(5)])
        ids = [e["id"] for e in reply["executions"]]
        self.assertEqual(len(set(ids)), 5)
        outputs = [self.baton.wait(i, timeout=30)["output"]["said"] for i in ids]
        self.assertEqual(outputs, ["hello %d" % i for i in range(5)])

    def test_cancel_and_retry(self):
        run = self.baton.submit("approval")
        self.baton.cancel(run["id"], reason="not needed")
        self.assertEqual(self.baton.wait(run["id"], timeout=30)["status"], "cancelled")
        failed = self.baton.run("broken", timeout=30)
        self.baton.retry(failed["id"])
        deadline = time.monotonic() + 30
        while True:  # the retry is asynchronous: wait for its second failure
            types = [e["type"] for e in self.baton.events(failed["id"])]
            if types.count("execution.failed") == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(types.count("execution.failed"), 2, types)
        self.assertIn("execution.retried", types)
        # Following a finished, retried execution ends at its newest final event.
        followed = [e["type"] for e in self.baton.events(failed["id"], follow=True, timeout=30)]
        self.assertEqual(followed, types)


if __name__ == "__main__":
    unittest.main()
