// Signals: `type: wait` with `signal: NAME` waits until a signal of that name is sent to
// the execution (Engine::Signal); its payload becomes the step's output. A signal is
// committed when it arrives, so one sent before its step waits is kept, and the step
// that takes it is recorded in the same batch as that step's completion: a crash
// between the two repeats nothing and loses nothing.
#include "engine/engine_impl.h"

#include "model/payload_schema.h"

namespace baton {

using engine::ExecState;
using engine::StepState;

const std::string* SignalWaitedFor(const StepDef& def) {
  // A fan-out cannot wait on a signal (ParseWorkflow refuses it): one signal, one step.
  if (def.type != StepType::kWait || !def.for_each.is_null()) return nullptr;
  auto it = def.spec.find("signal");
  return it != def.spec.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

Result<SignalRecord> Engine::Impl::Signal(const std::string& id, const std::string& name,
                                          Json payload) {
  ExecPtr ex = Find(id);
  if (!ex) return Status(errc::kNotFound, "execution '" + id + "' is not running here");
  if (ex->finished) {
    return Status(errc::kConflict, "execution '" + id + "' is " + ToString(ex->rec.status) +
                                       "; signals go to running executions");
  }
  // The name must be one the workflow waits for (a typo would otherwise wait forever),
  // and the payload must suit every step that may take it.
  bool expected = false;
  std::string names;
  for (const StepState& st : ex->steps) {
    const std::string* waits = SignalWaitedFor(*st.def);
    if (waits == nullptr) continue;
    if (*waits != name) {
      names += (names.empty() ? "" : ", ") + *waits;
      continue;
    }
    expected = true;
    if (auto schema = st.def->spec.find("schema"); schema != st.def->spec.end()) {
      if (std::string e = model::MatchPayloadSchema(*schema, payload); !e.empty()) {
        return Status(
            errc::kValidation,
            "signal '" + name + "' does not match the schema of step '" + st.def->id + "': " + e);
      }
    }
  }
  if (!expected) {
    return Status(errc::kValidation, "workflow '" + ex->def->name +
                                         "' has no step waiting for signal '" + name + "'" +
                                         (names.empty() ? "" : " (it waits for: " + names + ")"));
  }
  if (ex->extras && ex->extras->pending_signals >= Engine::kMaxPendingSignals) {
    return Status(errc::kTooManySignals, "execution '" + id + "' already holds " +
                                             std::to_string(Engine::kMaxPendingSignals) +
                                             " signals no step has taken");
  }
  TurnGuard turn(this);
  engine::ExecExtras& more = ex->More();
  SignalRecord& sg = more.signals.emplace_back();
  sg.execution_id = id;
  sg.seq = static_cast<int64_t>(
      more.signals.size() == 1 ? 1 : more.signals[more.signals.size() - 2].seq + 1);
  sg.ns = ex->rec.ns;
  sg.name = name;
  sg.payload = std::move(payload);
  sg.sent_at = loop_->Now();
  ++more.pending_signals;
  batch_.signals.push_back(sg);
  const size_t sent = more.signals.size() - 1;
  Emit(*ex, "signal.received", -1, {{"name", name}, {"seq", sg.seq}});
  for (size_t i = 0; i < ex->steps.size(); ++i) {
    const StepState& st = ex->steps[i];
    const std::string* waits = SignalWaitedFor(*st.def);
    if (waits && *waits == name && st.in_flight && st.rec.status == StepStatus::kRunning) {
      TakeSignal(ex, static_cast<int>(i));
      break;
    }
  }
  return more.signals[sent];  // with consumed_by set when a waiting step took it
}

void Engine::Impl::BeginSignalWait(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  if (st.rec.status != StepStatus::kRunning) {
    st.rec.status = StepStatus::kRunning;
    MarkStepDirty(ex, step);
    Emit(*ex, "step.started", step, nullptr, st.rec.attempts);
  }
  if (TakeSignal(ex, step)) return;
  Emit(*ex, "step.waiting", step, {{"signal", st.def->spec["signal"]}}, st.rec.attempts);
}

bool Engine::Impl::TakeSignal(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  const std::string* name = SignalWaitedFor(*st.def);
  if (name == nullptr || !ex->extras) return false;
  for (SignalRecord& sg : ex->extras->signals) {
    if (!sg.consumed_by.empty() || sg.name != *name) continue;
    sg.consumed_by = st.def->id;
    sg.consumed_at = loop_->Now();
    --ex->extras->pending_signals;
    batch_.signals.push_back(sg);
    Emit(*ex, "signal.consumed", step, {{"name", sg.name}, {"seq", sg.seq}}, st.rec.attempts);
    RunResult taken;
    taken.output = sg.payload;
    ApplyResult(ex, step, std::move(taken));
    return true;
  }
  return false;
}

}  // namespace baton
