#include "server/submitter.h"

#include <algorithm>

namespace baton::server {

const char* ToString(ControlOp op) {
  switch (op) {
    case ControlOp::kCancel:
      return "cancel";
    case ControlOp::kPause:
      return "pause";
    case ControlOp::kResume:
      return "resume";
  }
  return "?";
}

void Submitter::SubmitStored(const std::string& ns, const std::string& workflow, int version,
                             Json input, std::string idempotency_key,
                             std::function<void(Result<SubmitOutcome>)> done) {
  auto def = LoadStoredWorkflow(host_->store(), ns, workflow, version, workflows_);
  if (!def.ok()) return done(def.status());
  auto resolved = ResolveInputs(**def, input, {});
  if (!resolved.ok()) return done(Status(errc::kValidation, resolved.status().message()));
  SubmitRequest req;
  req.ns = ns;
  req.workflow = std::move(def.value());
  req.input = std::move(resolved.value());
  req.idempotency_key = std::move(idempotency_key);
  Submit(std::move(req), std::move(done));
}

Result<std::shared_ptr<const WorkflowDef>> LoadStoredWorkflow(CatalogStore* store,
                                                              const std::string& ns,
                                                              const std::string& name, int version,
                                                              WorkflowCache* cache) {
  auto missing = [&](const Status& s) -> Status {
    if (s.code() != errc::kNotFound) return s;
    return Status(errc::kNotFound, "no workflow '" + name + "'" +
                                       (version ? " version " + std::to_string(version) : "") +
                                       " in namespace '" + ns + "'");
  };
  if (cache != nullptr) {
    auto def = cache->Load(*store, ns, name, version);
    if (!def.ok()) return missing(def.status());
    return def;
  }
  auto wf = store->GetWorkflow(ns, name, version);
  if (!wf.ok()) return missing(wf.status());
  auto def = WorkflowFromSnapshot(wf->definition, "workflow " + wf->name);
  if (!def.ok()) return def.status();
  def->version = wf->version;
  return std::make_shared<const WorkflowDef>(std::move(def.value()));
}

namespace {

// Stripe's rule: a key names one request. Reused with another workflow or input it is a
// client bug, answered 409 IDEMPOTENCY_MISMATCH, not the first execution. (The version
// is not compared: a retry after a new version was saved is the same request.)
Status KeyReused(const std::string& key, const std::string& id, const std::string& workflow,
                 const Json& input, const SubmitRequest& request) {
  std::string differs;
  if (workflow != request.workflow->name) {
    differs = "workflow '" + workflow + "'";
  } else if (input != request.input) {
    differs = "another input";
  } else {
    return Status::Ok();
  }
  return Status("IDEMPOTENCY_MISMATCH", "idempotency key '" + key + "' was used for execution " +
                                            id + " with " + differs +
                                            "; a key names one request (use a new key)");
}

}  // namespace

void Submitter::Submit(SubmitRequest request, std::function<void(Result<SubmitOutcome>)> done) {
  SubmitEarly(std::move(request), std::move(done), nullptr);
}

void Submitter::SubmitEarly(SubmitRequest request, std::function<void(Result<SubmitOutcome>)> done,
                            std::function<Deliver(SubmitOutcome)> prepare) {
  host_->Post([this, request = std::move(request), done = std::move(done),
               prepare = std::move(prepare)](Engine& engine) mutable {
    StartOne(engine, std::move(request), done, prepare, nullptr);
  });
}

// Steps per engine turn in SubmitAll, about: a turn ends after the start that reaches it.
// On bench/peers' shapes (`jobs`, `worker-jobs`, `flows`; requests of 1,000) turns of 32
// to 512 steps did as well as one another, and one turn per request did worse on `flows`.
constexpr size_t kStepsPerTurn = 128;

void Submitter::SubmitAll(std::vector<SubmitRequest> requests,
                          std::function<void(size_t, Result<SubmitOutcome>)> done) {
  host_->Post(
      [this, requests = std::move(requests), done = std::move(done)](Engine& engine) mutable {
        // The starts go ~128 steps to a turn: each turn's records go in one batch,
        // committed together, instead of a batch (and its callbacks) per start for the
        // committer to group; and the writer commits one while this thread makes the
        // next, which one turn for the whole request would not let it do. A turn's
        // starts wait for its batch, registered once the turn has submitted it
        // (WhenDurable inside the turn would wait only for the batches before), and
        // each turn's for its own: a batch the store refuses fails its starts only.
        size_t next = 0;
        while (next < requests.size()) {
          auto waiters = std::make_shared<std::vector<std::function<void(const Status&)>>>();
          {
            Engine::JoinedTurn turn(&engine);
            for (size_t steps = 0; next < requests.size() && steps < kStepsPerTurn; ++next) {
              steps += std::max<size_t>(1, requests[next].workflow->steps.size());
              StartOne(
                  engine, std::move(requests[next]),
                  [done, i = next](Result<SubmitOutcome> out) { done(i, std::move(out)); }, nullptr,
                  waiters.get());
            }
          }
          if (waiters->empty()) continue;
          engine.WhenDurable([waiters](const Status& st) {
            for (const auto& wait : *waiters) wait(st);
          });
        }
      });
}

void Submitter::StartOne(Engine& engine, SubmitRequest request,
                         const std::function<void(Result<SubmitOutcome>)>& done,
                         const std::function<Deliver(SubmitOutcome)>& prepare,
                         std::vector<std::function<void(const Status&)>>* after_turn) {
  auto when_durable = [&](std::function<void(const Status&)> wait) {
    if (after_turn != nullptr) {
      after_turn->push_back(std::move(wait));
    } else {
      engine.WhenDurable(std::move(wait));
    }
  };
  const auto key = std::make_pair(request.ns, request.idempotency_key);
  if (!request.idempotency_key.empty()) {
    // Checked here, on the one engine thread, so two racing submits cannot both start:
    // first the starts not yet durable, then the store.
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      const InFlight& f = it->second;
      if (Status s = KeyReused(key.second, f.id, f.workflow, f.input, request); !s.ok()) {
        return done(s);
      }
      std::string id = f.id;
      when_durable([done, id](const Status& st) {
        if (!st.ok()) return done(st);
        done(SubmitOutcome{id, false, std::nullopt});
      });
      return;
    }
    ExecutionFilter f;
    f.ns = request.ns;
    f.idempotency_key = request.idempotency_key;
    f.limit = 1;
    auto existing = host_->store()->ListExecutions(f);
    if (!existing.ok()) return done(existing.status());
    if (!existing->empty()) {
      const ExecutionRecord& e = existing->front();
      if (Status s = KeyReused(key.second, e.id, e.workflow, e.input, request); !s.ok()) {
        return done(s);
      }
      return done(SubmitOutcome{e.id, false, std::nullopt});
    }
  }
  StartRequest start;
  start.workflow = request.workflow;
  // The input is kept only to compare a repeated idempotency key against it.
  start.input = key.second.empty() ? std::move(request.input) : request.input;
  start.priority = request.priority;
  start.ns = request.ns;
  start.idempotency_key = request.idempotency_key;
  start.parent_id = request.parent_id;
  auto id = engine.Start(std::move(start));
  if (!id.ok()) return done(id.status());
  if (!request.idempotency_key.empty()) {
    in_flight_[key] = InFlight{*id, request.workflow->name, request.input};
  }
  // Taken now, in the turn that submitted the start's batch: what becomes durable.
  // (A noop-only workflow has already finished in that batch.)
  std::optional<ExecutionRecord> record;
  if (request.want_record) record = engine.Record(*id);
  if (prepare && record) {
    // The answer is made now, from the record the start is writing, and goes out from
    // the thread that committed it once that is durable.
    engine.WhenDurableOffLoop(prepare(SubmitOutcome{*id, true, std::move(record)}));
    if (!key.second.empty()) {
      when_durable([this, key](const Status&) { in_flight_.erase(key); });
    }
    return;
  }
  when_durable([this, done, key, id = *id, record = std::move(record)](const Status& st) {
    if (!key.second.empty()) in_flight_.erase(key);
    if (!st.ok()) return done(st);
    done(SubmitOutcome{id, true, std::move(record)});
  });
}

Status Submitter::RunsElsewhere(const std::string& execution_id, const std::string& what,
                                std::string* holder_name) {
  ExecutionLeases* leases = host_->store()->leases();
  if (leases == nullptr) return Status::Ok();
  auto holder = leases->HolderOf(execution_id);
  if (!holder.ok() || holder->empty() || *holder == leases->instance()) return Status::Ok();
  if (holder_name != nullptr) *holder_name = *holder;
  return Status(errc::kConflict, "execution '" + execution_id + "' runs on instance " + *holder +
                                     " (this is " + leases->instance() + "): send the " + what +
                                     " to that instance");
}

bool Submitter::ForwardIfElsewhere(ControlRequest request, std::function<void(Status, Json)> done) {
  std::string holder;
  if (!forward_ || RunsElsewhere(request.execution_id, request.op, &holder).ok()) return false;
  forward_(holder, std::move(request), std::move(done));
  return true;
}

void Submitter::Control(const std::string& execution_id, ControlOp op, std::string reason,
                        std::function<void(Status)> done, bool relayed) {
  host_->Post([this, execution_id, op, reason = std::move(reason), done = std::move(done),
               relayed](Engine& engine) {
    Status st;
    switch (op) {
      case ControlOp::kCancel:
        st = engine.Cancel(execution_id, reason);
        break;
      case ControlOp::kPause:
        st = engine.Pause(execution_id);
        break;
      case ControlOp::kResume:
        st = engine.Resume(execution_id);
        break;
    }
    if (!st.ok()) {
      if (st.code() == errc::kNotFound) {
        // Not in the engine: finished, or run by another instance. Say which.
        auto stored = host_->store()->GetExecution(execution_id);
        if (stored.ok() && IsTerminal(stored->status)) {
          return done(Status(errc::kConflict,
                             std::string("cannot ") + ToString(op) + " execution '" + execution_id +
                                 "': it is already " + baton::ToString(stored->status)));
        }
        std::string holder;
        if (Status elsewhere = RunsElsewhere(execution_id, ToString(op), &holder);
            !elsewhere.ok()) {
          if (relayed || !forward_) return done(elsewhere);
          ControlRequest request;
          request.execution_id = execution_id;
          request.op = ToString(op);
          if (op == ControlOp::kCancel) request.args = {{"reason", reason}};
          return forward_(holder, std::move(request),
                          [done](Status answer, const Json&) { done(std::move(answer)); });
        }
      }
      return done(st);
    }
    engine.WhenDurable([done](const Status& durable) { done(durable); });
  });
}

void Submitter::Retry(const std::string& execution_id, const std::string& from_step,
                      std::function<void(Status)> done) {
  Store* store = host_->store();
  auto execution = store->GetExecution(execution_id);
  if (!execution.ok()) return done(execution.status());
  auto steps = store->GetSteps(execution_id);
  if (!steps.ok()) return done(steps.status());
  auto attempts = store->GetFailedAttempts(execution_id);
  if (!attempts.ok()) return done(attempts.status());
  auto last = store->LastEventSeq(execution_id);
  if (!last.ok()) return done(last.status());
  auto signals = store->ListSignals(execution_id);
  if (!signals.ok()) return done(signals.status());
  DeadLetterFilter open;
  open.execution_id = execution_id;
  open.status = kDeadLetterOpen;
  open.limit = 0;
  auto dead_letters = store->ListDeadLetters(open);
  if (!dead_letters.ok()) return done(dead_letters.status());
  const int64_t last_seq = *last;
  auto state = std::make_shared<
      std::tuple<ExecutionRecord, std::vector<StepRecord>, std::vector<AttemptRecord>,
                 std::vector<SignalRecord>, std::vector<DeadLetterRecord>>>(
      std::move(execution.value()), std::move(steps.value()), std::move(attempts.value()),
      std::move(signals.value()), std::move(dead_letters.value()));
  host_->Post([state, last_seq, from_step, done = std::move(done)](Engine& engine) {
    auto& [e, s, a, sg, dl] = *state;
    Status st = engine.Retry(e, s, a, last_seq, sg, from_step, dl);
    if (!st.ok()) return done(st);
    engine.WhenDurable([done](const Status& durable) { done(durable); });
  });
}

void Submitter::Signal(const std::string& execution_id, const std::string& name, Json payload,
                       std::function<void(Result<SignalRecord>)> done, bool relayed) {
  host_->Post([this, execution_id, name, payload = std::move(payload), done = std::move(done),
               relayed](Engine& engine) mutable {
    Json kept = forward_ && !relayed ? payload : Json();  // for a forward
    Result<SignalRecord> sent = engine.Signal(execution_id, name, std::move(payload));
    if (!sent.ok()) {
      if (sent.status().code() == errc::kNotFound) {
        auto stored = host_->store()->GetExecution(execution_id);
        if (stored.ok() && IsTerminal(stored->status)) {
          return done(Status(errc::kConflict, "execution '" + execution_id + "' is already " +
                                                  baton::ToString(stored->status) +
                                                  "; signals go to running executions"));
        }
        std::string holder;
        if (Status elsewhere = RunsElsewhere(execution_id, "signal", &holder); !elsewhere.ok()) {
          if (relayed || !forward_) return done(elsewhere);
          ControlRequest request;
          request.execution_id = execution_id;
          request.op = "signal";
          request.args = {{"name", name}, {"payload", std::move(kept)}};
          // The holder answers with the signal's seq; the record is in the store by then.
          return forward_(holder, std::move(request),
                          [store = host_->store(), execution_id, holder, done](Status answer,
                                                                               const Json& result) {
                            if (!answer.ok()) return done(answer);
                            const int64_t seq = result.is_object() ? result.value("seq", 0) : 0;
                            auto signals = store->ListSignals(execution_id);
                            if (!signals.ok()) return done(signals.status());
                            for (const SignalRecord& s : *signals) {
                              if (s.seq == seq) return done(s);
                            }
                            done(Status(errc::kStore, "instance " + holder + " took signal " +
                                                          std::to_string(seq) +
                                                          " but the store does not have it"));
                          });
        }
      }
      return done(sent.status());
    }
    engine.WhenDurable([done, record = std::move(sent.value())](const Status& durable) {
      if (!durable.ok()) return done(durable);
      done(record);
    });
  });
}

}  // namespace baton::server
