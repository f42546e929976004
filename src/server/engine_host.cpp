#include "server/engine_host.h"

#include "common/thread_name.h"
#include "common/thread_slice.h"

#include <future>

namespace baton::server {

EngineHost::EngineHost(Store* store, EngineOptions options, const HttpRunnerOptions& http,
                       RealClock clock)
    : store_(store), loop_(clock) {
  committer_ = NewGroupCommitter(store_);
  shell_ = NewShellRunner();
  http_ = NewHttpRunner(http);
  // Several instances on one database hold pool slots in it (null otherwise).
  options.shared_pools = store_->shared_pools();
  engine_ = std::make_unique<Engine>(&loop_, committer_.get(), options);
  engine_->SetRunner(StepType::kShell, shell_.get());
  engine_->SetRunner(StepType::kHttp, http_.get());
}

EngineHost::~EngineHost() {
  Stop();
}

void EngineHost::CommitWhenIdle() {
  // Rather than wake the writer and sleep: on a busy machine the writer can wait a whole
  // time slice for a core (CommitQueue::CommitHere).
  //
  // For the same reason the loop's batches do not wake the writer: the loop commits them
  // itself when it goes idle, or wakes the writer when it finds more tasks to run first.
  // In the idle hook, WakeDeferred() covers a batch submitted by CommitHere's callbacks.
  Committer* committer = committer_.get();
  loop_.Post([committer] { committer->DeferWakeupsOnThisThread(); });
  loop_.SetIdleHook([committer] {
    committer->CommitHere();
    committer->WakeDeferred();
  });
  loop_.SetBusyHook([committer] { committer->WakeDeferred(); });
}

void EngineHost::SetRunner(StepType type, Runner* runner) {
  engine_->SetRunner(type, runner);
}

void EngineHost::AddObserver(ExecutionObserver* observer, ObserverThread thread) {
  engine_->AddObserver(observer, thread);
}

Result<size_t> EngineHost::Start(bool recover) {
  std::promise<Result<size_t>> recovered;
  auto done = recovered.get_future();
  loop_.Post([this, &recovered, recover] {
    // New events are numbered after every stored one, then recovery continues.
    Status seeded = SeedEventPositions(store_, engine_.get());
    if (seeded.ok()) seeded = LoadBreakers(store_, engine_.get());
    if (SharedCache* shared = store_->shared_cache(); shared != nullptr && seeded.ok()) {
      // Before the whole cache is read: the lease keeper reads what changed from here.
      auto now = shared->CacheChangesAfter(SharedCache::kCacheNow);
      if (now.ok()) cache_read_from_ = now->next;
      seeded = now.status();
    }
    if (seeded.ok()) seeded = LoadCache(store_, engine_.get());
    if (seeded.ok()) seeded = LoadPools(store_, engine_.get());
    if (!seeded.ok()) {
      recovered.set_value(seeded);
      return;
    }
    auto ids = recover ? RecoverExecutions(store_, engine_.get())
                       : Result<std::vector<std::string>>(std::vector<std::string>{});
    if (!ids.ok()) {
      recovered.set_value(ids.status());
      return;
    }
    // Running steps are re-attached to their runners (a remote worker's assignment) in
    // the effects of the recovery commit. The server must not listen before they ran: a
    // worker back at once would have its result refused as stale, and the step run again.
    // Effects run right after this callback, in the same task; the answer is posted
    // behind them.
    engine_->WhenDurable([this, &recovered, count = ids->size()](const Status& st) {
      loop_.Post([&recovered, count, st] {
        if (st.ok()) {
          recovered.set_value(count);
        } else {
          recovered.set_value(st);
        }
      });
    });
  });
  running_ = true;
  thread_ = std::thread([this] {
    SetThreadName("baton-engine");
    RequestShortSlices(slice_);
    loop_.Run();
  });
  Result<size_t> out = done.get();
  if (!out.ok()) Stop();
  return out;
}

void EngineHost::Stop() {
  if (!running_.exchange(false)) return;
  loop_.Stop();
  thread_.join();
  shell_->Shutdown();
  http_->Shutdown();
  committer_->Flush();
}

void EngineHost::Every(Duration period, std::function<void(Engine&)> task) {
  auto tick = std::make_shared<std::function<void()>>();
  *tick = [this, period, task = std::move(task), weak = std::weak_ptr(tick)] {
    task(*engine_);
    if (auto again = weak.lock()) loop_.ScheduleAfter(period, *again);
  };
  periodic_.push_back(tick);
  loop_.Post([tick] { (*tick)(); });
}

void EngineHost::Post(std::function<void(Engine&)> task) {
  if (!running_) return;
  loop_.Post([this, task = std::move(task)] { task(*engine_); });
}

void EngineHost::AfterCurrentTasks(std::function<void()> task) {
  if (!running_) return task();
  loop_.Post(std::move(task));  // the loop runs what it took before what is posted now
}

}  // namespace baton::server
