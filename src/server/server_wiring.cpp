// The parts of a server that call each other: the scheduler's and the deliverer's hooks
// into the submitter and the engine, and the coordinator's reports into executions' logs
// (server_impl.h).
#include "server/server_impl.h"

#include <cstdio>
#include <functional>
#include <unordered_map>

namespace baton::server {

namespace {

// A refused worker message goes into its execution's log: through the engine while the
// execution runs there; else (it finished: the usual case for a late result) appended to
// the stored log once the engine's batches are durable, after its last event. Rare, so
// the append commits synchronously on the engine thread (no two can race for a seq).
void LogStaleResult(EngineHost* host, const std::string& execution, const std::string& step,
                    Json details) {
  Engine* engine = host->engine();
  if (engine->RecordStaleResult(execution, step, details)) return;
  engine->WhenDurable([host, engine, execution, step, details](const Status& durable) {
    if (!durable.ok() || engine->RecordStaleResult(execution, step, details)) return;
    Store* store = host->store();
    Result<ExecutionRecord> e = store->GetExecution(execution);
    Result<int64_t> last = store->LastEventSeq(execution);
    if (!e.ok() || !last.ok()) return;  // unknown execution: nothing to log
    if (store->leases() != nullptr && !IsTerminal(e->status)) {
      // Several instances: it runs on another (or will, once claimed), whose log it is;
      // a write of it from here would be refused, and with it everything committed
      // alongside.
      std::fprintf(stderr,
                   "baton: a worker's stale result for execution %s (step %s), which runs on "
                   "another instance, was ignored\n",
                   execution.c_str(), step.c_str());
      return;
    }
    auto batch = std::make_shared<WriteBatch>();
    EventRecord ev;
    ev.execution_id = execution;
    ev.seq = *last + 1;
    ev.position = engine->TakeEventPosition();
    ev.type = "step.stale_result";
    ev.time = host->clock().Now();
    ev.step_id = step;
    ev.data = details;
    batch->events.push_back(std::move(ev));
    host->committer()->Submit(batch, [](const Status& s) {
      if (!s.ok()) {
        std::fprintf(stderr, "baton: logging a stale worker result: %s\n", s.message().c_str());
      }
    });
    host->committer()->Flush();
  });
}

// A control request another instance relayed to this one (it holds the execution).
void ApplyRelayed(Engine& engine, Submitter* submitter, workers::Coordinator* coordinator,
                  const ControlRequest& r, std::function<void(Status, Json)> answer) {
  const Json& args = r.args.is_object() ? r.args : Json::object();
  if (r.op == "why") {
    // Not relayed again: an instance that no longer holds it says it does not wait.
    auto steps = WhySteps(engine, coordinator, r.execution_id);
    if (!steps.ok() && steps.status().code() != errc::kNotFound) {
      return answer(steps.status(), Json());
    }
    return answer(Status::Ok(), Json{{"steps", steps.ok() ? *steps : Json::array()}});
  }
  if (r.op == "signal") {
    const Json payload = args.contains("payload") ? args["payload"] : Json();
    return submitter->Signal(
        r.execution_id, args.value("name", ""), payload,
        [answer](Result<SignalRecord> sent) {
          if (!sent.ok()) return answer(sent.status(), Json());
          answer(Status::Ok(), Json{{"seq", sent->seq}});
        },
        /*relayed=*/true);
  }
  ControlOp op;
  if (r.op == "cancel") {
    op = ControlOp::kCancel;
  } else if (r.op == "pause") {
    op = ControlOp::kPause;
  } else if (r.op == "resume") {
    op = ControlOp::kResume;
  } else {
    return answer(Status(errc::kInvalidArgument, "unknown control request '" + r.op + "'"), Json());
  }
  submitter->Control(
      r.execution_id, op, args.value("reason", "cancelled through another instance"),
      [answer](Status st) { answer(std::move(st), Json()); }, /*relayed=*/true);
}

}  // namespace

Scheduler::Hooks ScheduleHooks(Server::Impl& impl) {
  Scheduler::Hooks hooks;
  Store* store = impl.store.get();
  Submitter* submitter = impl.submitter.get();
  EngineHost* host = impl.engine.get();
  hooks.start = [submitter](const ScheduleRecord& s, const std::string& key,
                            std::function<void(Result<std::string>)> done) {
    submitter->SubmitStored(s.ns, s.workflow, s.version, s.input, key,
                            [done](Result<SubmitOutcome> out) {
                              if (!out.ok()) return done(out.status());
                              done(out->execution_id);
                            });
  };
  hooks.running = [store](const std::string& id) {
    auto e = store->GetExecution(id);
    return e.ok() && !IsTerminal(e->status);
  };
  hooks.leading = [raw = &impl, leases = store->leases()] {
    return leases == nullptr || (raw->keeper != nullptr && raw->keeper->leading());
  };
  hooks.cancel = [host](const std::string& id, const std::string& reason) {
    host->Post([id, reason](Engine& engine) { (void)engine.Cancel(id, reason); });
  };
  return hooks;
}

// Notifications are POSTed by the http step runner (its egress guard and limits apply);
// trigger starts go through the submitter with the key "trigger/<delivery id>".
Deliverer::Hooks DeliveryHooks(Server::Impl& impl) {
  Deliverer::Hooks hooks;
  Runner* http = impl.engine->http_runner();
  hooks.notify = [http](const DeliveryRecord& d, std::function<void(Deliverer::Outcome)> done) {
    RunRequest req;
    req.execution_id = d.execution_id;
    req.step_id = "notify";
    req.assignment_id = d.id + "/" + std::to_string(d.attempts + 1);
    req.type = StepType::kHttp;
    req.spec = MakeSpec({{"request",
                          {{"method", "POST"},
                           {"url", d.target},
                           {"headers",
                            {{"User-Agent", "baton-notify"},
                             {"X-Baton-Event", d.event},
                             {"X-Baton-Delivery", d.id}}},
                           {"body", d.payload},
                           {"timeout", "10s"},
                           {"max_redirects", 0},
                           {"max_output", 65536}}}});
    RunFunctions callbacks;
    callbacks.on_done = [done](RunResult result) {
      Deliverer::Outcome out;
      out.status = result.status;
      if (result.output.is_object() && result.output.contains("status")) {
        out.http_status = result.output["status"].get<int>();
      }
      const std::string& code = result.status.code();
      if (code == errc::kHttpStatus) {
        out.retryable = RetryableHttpStatus(out.http_status);
      } else if (code == errc::kValidation ||
                 result.status.message().find("egress guard") != std::string::npos) {
        out.retryable = false;  // the URL itself is refused: trying again cannot help
      }
      done(std::move(out));
    };
    http->Start(req, std::move(callbacks));
  };
  Submitter* submitter = impl.submitter.get();
  hooks.trigger = [submitter](const DeliveryRecord& d,
                              std::function<void(Deliverer::Outcome)> done) {
    const Json& p = d.payload;
    submitter->SubmitStored(d.ns, p.value("workflow", ""), p.value("version", 0),
                            p.value("input", Json::object()), "trigger/" + d.id,
                            [done](Result<SubmitOutcome> started) {
                              Deliverer::Outcome out;
                              if (started.ok()) {
                                out.result = started->execution_id;
                              } else {
                                out.status = started.status();
                                // A missing workflow or refused input stays so; a store error may
                                // pass.
                                out.retryable = started.status().code() == errc::kStore;
                              }
                              done(std::move(out));
                            });
  };
  return hooks;
}

void WireCoordinator(Server::Impl& impl) {
  Server::Impl* raw = &impl;
  if (OfferBoard* board = impl.store->offers(); board != nullptr) {
    // Several instances: a step no worker connected here can take is offered to the
    // others, and this instance's workers take theirs; a control request (or a `why`)
    // for an execution another instance holds goes to that one.
    impl.exchange =
        std::make_unique<InstanceExchange>(board, impl.store->relay(), impl.engine.get(),
                                           impl.coordinator.get(), impl.store->leases()->lease());
    impl.coordinator->SetExchange(impl.exchange.get());
    // The instance that fires cron schedules also clears the board.
    impl.exchange->SetLeading([raw] { return raw->keeper && raw->keeper->leading(); });
    InstanceExchange* exchange = impl.exchange.get();
    impl.submitter->SetForward([exchange](const std::string& holder, ControlRequest request,
                                          std::function<void(Status, Json)> done) {
      exchange->Ask(holder, std::move(request), std::move(done));
    });
    impl.exchange->SetApply(
        [submitter = impl.submitter.get(), coordinator = impl.coordinator.get()](
            Engine& engine, const ControlRequest& r, std::function<void(Status, Json)> answer) {
          ApplyRelayed(engine, submitter, coordinator, r, std::move(answer));
        });
  }
  EngineHost* engine_host = impl.engine.get();
  // A worker that keeps sending for work it lost must not grow the event log without
  // bound: a step's log shows its first few stale messages; the metric counts them all.
  auto logged = std::make_shared<std::unordered_map<std::string, int>>();  // engine thread
  impl.coordinator->SetStaleHandler(
      [engine_host, logged](const std::string& execution, const std::string& step, Json details) {
        constexpr int kStaleEventsPerStep = 3;
        constexpr size_t kTrackedSteps = 4096;
        if (logged->size() >= kTrackedSteps) logged->clear();
        int& n = (*logged)[execution + "/" + step];
        if (++n > kStaleEventsPerStep) return;
        if (n == kStaleEventsPerStep) {
          details["note"] =
              "further stale messages for this step are counted in "
              "baton_stale_messages_total, not logged";
        }
        LogStaleResult(engine_host, execution, step, std::move(details));
      });
  impl.coordinator->SetReassignHandler(
      [engine_host](const std::string& execution, const std::string& step, Json details) {
        engine_host->engine()->RecordReassignment(execution, step, std::move(details));
      });
}

}  // namespace baton::server
