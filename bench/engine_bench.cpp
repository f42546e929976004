// Engine benchmarks (run in Release via bench/run.sh):
//   BM_InMemory/{chain,fanout,layered}: 100k no-op steps, memory store, virtual-time
//     loop. Reports us_per_step (DESIGN.md §9 target <= 1 us; issue #2 done at <= 2 us).
//   BM_EngineOnly: the same with batches discarded: the engine's scheduling cost alone.
//   BM_CachedInMemory: the layered 100k DAG with `cache:` on every step, run twice on one
//     engine: miss_us_per_step (key, lookup, entry stored) and hit_us_per_step (served
//     from the cache), against BM_InMemory's us_per_step.
//   BM_DurableSqlite: no-op steps through SQLite (synchronous=FULL) with group commit
//     on a real loop. Reports steps_per_s (target >= 50,000; issue #2 done at 10,000).
#include <baton/engine.h>
#include <baton/event_loop.h>
#include <baton/memory_store.h>
#include <baton/sqlite_store.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <random>

namespace baton {
namespace {

double CpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

enum Shape { kChain = 0, kFanout = 1, kLayered = 2 };

std::shared_ptr<const WorkflowDef> MakeDag(Shape shape, int n) {
  auto wf = std::make_shared<WorkflowDef>();
  wf->name = "bench";
  wf->source = std::make_shared<const std::string>(R"({"name":"bench"})");
  wf->steps.resize(n);
  std::mt19937 rng(7);
  const int width = 100;  // layered: 1000 layers of 100
  for (int i = 0; i < n; ++i) {
    StepDef& s = wf->steps[i];
    s.id = "s" + std::to_string(i);
    s.type = StepType::kNoop;
    if (shape == kChain && i > 0) s.depends_on = {"s" + std::to_string(i - 1)};
    if (shape == kFanout && i > 0) s.depends_on = {"s0"};
    if (shape == kLayered && i >= width) {
      int layer_start = (i / width - 1) * width;
      std::uniform_int_distribution<int> pick(layer_start, layer_start + width - 1);
      int k = 1 + static_cast<int>(rng() % 3);
      for (int j = 0; j < k; ++j) {
        std::string dep = "s" + std::to_string(pick(rng));
        if (std::find(s.depends_on.begin(), s.depends_on.end(), dep) == s.depends_on.end())
          s.depends_on.push_back(dep);
      }
    }
  }
  if (!AttachPlan(*wf).ok()) std::abort();  // what ParseWorkflow does for a file
  return wf;
}

// Accepts every batch at once and keeps nothing: what is left is the engine's own cost
// (decisions, records, events), without any store's.
class DiscardCommitter final : public Committer {
 public:
  void Submit(std::shared_ptr<const WriteBatch>, std::function<void(const Status&)> done) override {
    done(Status::Ok());
  }
  void Flush() override {}
};

void RunInMemory(benchmark::State& state, bool with_store) {
  const Shape shape = static_cast<Shape>(state.range(0));
  const int n = static_cast<int>(state.range(1));
  auto wf = MakeDag(shape, n);
  double total_us = 0, total_cpu_us = 0;
  for (auto _ : state) {
    SimClock clock;
    SimEventLoop loop(&clock);
    auto store = NewMemoryStore();
    std::unique_ptr<Committer> committer = with_store
                                               ? NewSyncCommitter(store.get())
                                               : std::unique_ptr<Committer>(new DiscardCommitter);
    Engine engine(&loop, committer.get(), EngineOptions{.parallel = 8, .random_seed = 1});
    const double c0 = CpuMicros();
    auto t0 = std::chrono::steady_clock::now();
    loop.Post([&] {
      StartRequest req;
      req.workflow = wf;
      auto id = engine.Start(req);
      if (!id.ok()) state.SkipWithError(id.status().message().c_str());
    });
    loop.RunUntilIdle();
    auto t1 = std::chrono::steady_clock::now();
    total_cpu_us += CpuMicros() - c0;
    total_us += std::chrono::duration<double, std::micro>(t1 - t0).count();
    if (engine.ActiveCount() != 0) state.SkipWithError("execution did not finish");
  }
  state.counters["us_per_step"] = total_us / static_cast<double>(state.iterations()) / n;
  // Single-threaded: CPU time is the figure a busy shared machine does not distort.
  state.counters["cpu_us_per_step"] = total_cpu_us / static_cast<double>(state.iterations()) / n;
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_InMemory(benchmark::State& state) {
  RunInMemory(state, true);
}
void BM_EngineOnly(benchmark::State& state) {
  RunInMemory(state, false);
}

BENCHMARK(BM_EngineOnly)
    ->ArgNames({"shape", "steps"})
    ->Args({kChain, 100'000})
    ->Args({kFanout, 100'000})
    ->Args({kLayered, 100'000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(BM_InMemory)
    ->ArgNames({"shape", "steps"})
    ->Args({kChain, 100'000})
    ->Args({kFanout, 100'000})
    ->Args({kLayered, 100'000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void BM_CachedInMemory(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto plain = MakeDag(kLayered, n);
  auto wf = std::make_shared<WorkflowDef>(*plain);
  for (StepDef& s : wf->steps) {
    s.edit_extra().cache = CacheSpec{Duration(3'600'000), nullptr};
    s.spec["with"] = Json{{"id", s.id}};
  }
  double miss_us = 0, hit_us = 0;
  for (auto _ : state) {
    SimClock clock;
    SimEventLoop loop(&clock);
    auto store = NewMemoryStore();
    auto committer = NewSyncCommitter(store.get());
    EngineOptions options{.parallel = 8, .random_seed = 1};
    options.cache.max_entries = static_cast<size_t>(n) * 2;
    options.cache.max_bytes = int64_t{1} << 30;
    Engine engine(&loop, committer.get(), options);
    for (double* total : {&miss_us, &hit_us}) {
      auto t0 = std::chrono::steady_clock::now();
      loop.Post([&] {
        StartRequest req;
        req.workflow = wf;
        auto id = engine.Start(req);
        if (!id.ok()) state.SkipWithError(id.status().message().c_str());
      });
      loop.RunUntilIdle();
      *total +=
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    if (engine.Stats().cache_hits != static_cast<uint64_t>(n)) {
      state.SkipWithError("the second run was not served from the cache");
    }
  }
  state.counters["miss_us_per_step"] = miss_us / static_cast<double>(state.iterations()) / n;
  state.counters["hit_us_per_step"] = hit_us / static_cast<double>(state.iterations()) / n;
}
BENCHMARK(BM_CachedInMemory)
    ->ArgNames({"steps"})
    ->Args({100'000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void BM_DurableSqlite(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto wf = MakeDag(kLayered, n);
  double total_s = 0;
  for (auto _ : state) {
    std::string path = std::filesystem::temp_directory_path() /
                       ("baton-bench-" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(path);
    auto store = OpenSqliteStore(path);
    if (!store.ok()) {
      state.SkipWithError(store.status().message().c_str());
      return;
    }
    auto committer = NewGroupCommitter(store->get());
    RealEventLoop loop;
    Engine engine(&loop, committer.get(), EngineOptions{.parallel = 8, .random_seed = 1});
    struct Done final : ExecutionObserver {
      RealEventLoop* loop;
      void OnEvent(const EventRecord& e, const ExecutionProgress&) override {
        if (e.type.rfind("execution.", 0) == 0 && e.type != "execution.started") loop->Stop();
      }
    } done;
    done.loop = &loop;
    engine.AddObserver(&done);
    auto t0 = std::chrono::steady_clock::now();
    loop.Post([&] {
      StartRequest req;
      req.workflow = wf;
      auto id = engine.Start(req);
      if (!id.ok()) state.SkipWithError(id.status().message().c_str());
    });
    loop.Run();
    committer->Flush();
    auto t1 = std::chrono::steady_clock::now();
    total_s += std::chrono::duration<double>(t1 - t0).count();
    committer.reset();
    store->reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  }
  state.counters["steps_per_s"] = n * static_cast<double>(state.iterations()) / total_s;
}
BENCHMARK(BM_DurableSqlite)
    ->ArgNames({"steps"})
    ->Arg(20'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace
}  // namespace baton

BENCHMARK_MAIN();
