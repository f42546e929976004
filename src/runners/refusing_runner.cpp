#include "runners/refusing_runner.h"

namespace baton::runners {
namespace {

class RefusingRunner final : public Runner {
 public:
  explicit RefusingRunner(Status why) : why_(std::move(why)) {}

  // The engine posts Done() back to its loop, so answering inside Start is safe.
  void Start(const RunRequest& /*request*/, RunCallbacks callbacks) override {
    RunResult result;
    result.status = why_;
    callbacks.Done(std::move(result));
  }
  void Cancel(const std::string& /*assignment_id*/) override {}

 private:
  const Status why_;
};

}  // namespace

std::unique_ptr<Runner> MakeRefusingRunner(Status why) {
  return std::make_unique<RefusingRunner>(std::move(why));
}

}  // namespace baton::runners
