// Starts and controls executions for API callers, answering only once the change is
// durable. Idempotency keys are enforced here: a repeated (namespace, key) returns the
// first execution, also while that one's start is still being committed.
//
// Threading: the public calls are thread-safe; `done` runs on the engine thread and
// must only hand the result on (e.g. to a Responder).
#pragma once

#include "server/engine_host.h"
#include "server/workflow_cache.h"

#include <baton/workflow.h>

#include <baton/store.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace baton::server {

struct SubmitRequest {
  std::string ns;
  std::shared_ptr<const WorkflowDef> workflow;
  Json input = Json::object();  // resolved
  std::optional<Priority> priority;
  std::string idempotency_key;
  std::string parent_id;
  // Return the started execution's record in the outcome (a copy, input included).
  bool want_record = false;
};

struct SubmitOutcome {
  std::string execution_id;
  bool created = true;  // false: an earlier submit with the same idempotency key
  // A created execution's record as its start committed it (durable when the outcome
  // arrives), so the answer needs no store read; unset for an earlier submit's.
  std::optional<ExecutionRecord> record;
};

// A workflow of the catalog (version 0 = the latest), parsed from its stored definition:
// what a submit by name starts, and what a `type: workflow` step starts as a child.
// NOT_FOUND names the workflow (and version).
// Parsed through `cache` when one is given.
Result<std::shared_ptr<const WorkflowDef>> LoadStoredWorkflow(CatalogStore* store,
                                                              const std::string& ns,
                                                              const std::string& name, int version,
                                                              WorkflowCache* cache = nullptr);

enum class ControlOp { kCancel, kPause, kResume };
const char* ToString(ControlOp op);

class Submitter {
 public:
  Submitter(EngineHost* host, WorkflowCache* workflows) : host_(host), workflows_(workflows) {}

  void Submit(SubmitRequest request, std::function<void(Result<SubmitOutcome>)> done);
  // As Submit, for a caller whose answer to a new start needs nothing more from the
  // engine than the record (`want_record`): `prepare` makes it from the outcome on the
  // engine thread as soon as the start is submitted
  // (while the store writes it) and returns what delivers it, which runs once the start
  // is durable, or with the store's error, on the thread that learns that first
  // (Engine::WhenDurableOffLoop): one thread hop sooner; on the loop should the commit
  // have ended before. It must be thread-safe and must not throw. Every
  // other outcome (a refusal, a repeated idempotency key) goes to `done` as in Submit.
  using Deliver = std::function<void(const Status&)>;
  void SubmitEarly(SubmitRequest request, std::function<void(Result<SubmitOutcome>)> done,
                   std::function<Deliver(SubmitOutcome)> prepare);
  // Several submissions (a batch submit), started in engine turns of about 128 steps:
  // each turn's starts are written in one batch and committed together. Each one's
  // outcome goes to `done` with its index, as Submit's would, on the engine thread; a
  // batch the store refuses fails the starts of its turn only.
  void SubmitAll(std::vector<SubmitRequest> requests,
                 std::function<void(size_t, Result<SubmitOutcome>)> done);
  // Submits a stored workflow (version 0 = the latest) with `input` checked against its
  // declared inputs. NOT_FOUND without the workflow, VALIDATION for bad input (both
  // through `done`, on the calling thread). Reads the store on the calling thread.
  void SubmitStored(const std::string& ns, const std::string& workflow, int version, Json input,
                    std::string idempotency_key, std::function<void(Result<SubmitOutcome>)> done);
  // Several instances: how a request for an execution another instance holds reaches it
  // (InstanceExchange::Ask); `done` gets the holder's answer. Unset: CONFLICT naming the
  // holder.
  using Forward = std::function<void(const std::string& holder, ControlRequest request,
                                     std::function<void(Status, Json)> done)>;
  void SetForward(Forward forward) { forward_ = std::move(forward); }
  // Forwards `request` when another instance holds its execution (true: `done` gets the
  // answer); false when none does or nothing forwards. Reads the store.
  bool ForwardIfElsewhere(ControlRequest request, std::function<void(Status, Json)> done);

  // CONFLICT when the execution is already terminal, NOT_FOUND when no instance holds it.
  // The caller checked that it exists in the caller's namespace. Held by another
  // instance: forwarded to it, unless `relayed` (it came from one: CONFLICT naming the
  // holder, so that a request never goes round).
  void Control(const std::string& execution_id, ControlOp op, std::string reason,
               std::function<void(Status)> done, bool relayed = false);
  // Engine::Retry over the stored execution (read here, on the caller's thread);
  // `from_step` ("" = none) as there; the execution's open dead letters of the steps run
  // again become replayed.
  void Retry(const std::string& execution_id, const std::string& from_step,
             std::function<void(Status)> done);
  // Engine::Signal; `done` gets the signal once it is durable (or the error). CONFLICT
  // when the execution is already terminal.
  void Signal(const std::string& execution_id, const std::string& name, Json payload,
              std::function<void(Result<SignalRecord>)> done, bool relayed = false);

 private:
  // Several instances: CONFLICT naming the instance that runs the execution, when it is
  // another (`what`: the request, "cancel"); OK otherwise. `holder` gets its name.
  Status RunsElsewhere(const std::string& execution_id, const std::string& what,
                       std::string* holder = nullptr);
  Forward forward_;
  // On the engine thread: the start Submit and SubmitEarly post; SubmitAll runs several
  // in a turn, and gets in `after_turn` what must wait for that turn's batch to be
  // durable (null: waits through Engine::WhenDurable at once).
  void StartOne(Engine& engine, SubmitRequest request,
                const std::function<void(Result<SubmitOutcome>)>& done,
                const std::function<Deliver(SubmitOutcome)>& prepare,
                std::vector<std::function<void(const Status&)>>* after_turn);

  EngineHost* host_;
  WorkflowCache* workflows_;
  // Engine thread only: keys whose start is not yet durable, so not yet in the store.
  // A start with an idempotency key that is not durable yet: its id and what it started.
  struct InFlight {
    std::string id;
    std::string workflow;
    Json input;
  };
  std::map<std::pair<std::string, std::string>, InFlight> in_flight_;
};

}  // namespace baton::server
