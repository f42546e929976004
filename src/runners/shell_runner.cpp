// The shell runner: RunRequest -> ShellSpec -> a job on the ProcessReactor -> RunResult.
#include <baton/runner.h>

#include <memory>
#include <utility>

#include "runners/reactor.h"
#include "runners/shell_result.h"
#include "runners/shell_spec.h"

namespace baton {
namespace {

using runners::ProcessJob;
using runners::ProcessOutcome;

class ShellRunner final : public Runner {
 public:
  explicit ShellRunner(const ShellRunnerOptions& options)
      : options_(options), reactor_(options.kill_grace) {}
  ~ShellRunner() override { reactor_.Shutdown(); }

  void Start(const RunRequest& request, RunCallbacks callbacks) override {
    Result<runners::ShellSpec> spec =
        runners::ParseShellSpec(*request.spec, options_.default_max_output);
    if (!spec.ok()) {
      // Reported from the I/O thread like every other result.
      RunResult result;
      result.status = spec.status();
      if (!reactor_.Post([callbacks, result]() mutable { callbacks.Done(std::move(result)); })) {
        ReportShutDown(callbacks);
      }
      return;
    }
    ProcessJob job;
    job.id = request.assignment_id;
    job.max_output = spec->max_output;
    job.on_started = [callbacks] { callbacks.Started(); };
    job.on_done = [callbacks, cpu = spec->process.cpu_seconds,
                   max = spec->max_output](ProcessOutcome outcome) {
      callbacks.Done(runners::BuildShellResult(std::move(outcome), cpu, max));
    };
    job.spec = std::move(spec->process);
    if (!reactor_.Submit(std::move(job))) ReportShutDown(callbacks);
  }

  void Cancel(const std::string& assignment_id) override { reactor_.Cancel(assignment_id); }

  void Shutdown() override { reactor_.Shutdown(); }
  void KillNow() override { reactor_.KillAll(); }

 private:
  static void ReportShutDown(const RunCallbacks& done) {
    RunResult result;
    result.status = Status(errc::kCancelled, "the shell runner is shut down");
    done.Done(std::move(result));
  }

  const ShellRunnerOptions options_;
  runners::ProcessReactor reactor_;
};

}  // namespace

std::unique_ptr<Runner> NewShellRunner(const ShellRunnerOptions& options) {
  return std::make_unique<ShellRunner>(options);
}

}  // namespace baton
