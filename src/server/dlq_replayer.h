// Bulk replay of dead letters at a bounded rate (POST /api/v1/dlq/replay), so replaying
// a thousand entries after an outage does not stampede the dependency that just came
// back. Each replay is a retry of the entry's execution from its step (Submitter::Retry).
//
// Jobs live in memory: a restart forgets them, and the entries they had not reached stay
// open, to be replayed again. Threading: the public calls are thread-safe; the replays
// run on the engine thread.
#pragma once

#include "server/engine_host.h"
#include "server/submitter.h"

#include <baton/json.h>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace baton::server {

class DlqReplayer {
 public:
  static constexpr size_t kMaxJobs = 100;  // finished ones beyond this are forgotten
  static constexpr double kMaxPerSecond = 1000;

  DlqReplayer(EngineHost* host, Submitter* submitter) : host_(host), submitter_(submitter) {}

  // Begins replaying `ids` (dead letters of `ns`), the first now and one more every
  // 1/per_second seconds. `filter` is echoed in the job. Returns the job's JSON.
  Json Start(const std::string& ns, Json filter, std::vector<int64_t> ids, double per_second);
  // NOT_FOUND when `id` is not a job of `ns`.
  Result<Json> Get(const std::string& ns, const std::string& id) const;
  Json List(const std::string& ns) const;
  // Stops a job: entries it has not reached stay open. NOT_FOUND.
  Result<Json> Cancel(const std::string& ns, const std::string& id);

 private:
  struct Job {
    std::string id;
    std::string ns;
    Json filter;
    double per_second = 1;
    std::vector<int64_t> ids;
    size_t next = 0;         // ids[next] is the next to replay
    size_t outstanding = 0;  // replays begun and not yet answered
    size_t replayed = 0;
    size_t skipped = 0;  // no longer open when reached
    size_t failed = 0;
    Json errors = Json::array();    // the first few failures: {id, code, message}
    std::string state = "running";  // running | done | cancelled
    TimeMs started_at = 0;
    TimeMs finished_at = 0;
  };
  static Json ToJson(const Job& job);
  void Tick(const std::string& id);  // engine thread
  void Answered(const std::string& id, int64_t entry, const Status& status);
  Job* FindLocked(const std::string& ns, const std::string& id);
  void MaybeFinishLocked(Job& job);

  EngineHost* host_;
  Submitter* submitter_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<Job>> jobs_;  // oldest first
  uint64_t last_id_ = 0;
};

}  // namespace baton::server
