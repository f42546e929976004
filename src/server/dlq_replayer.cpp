#include "server/dlq_replayer.h"

#include "server/views.h"

#include <algorithm>
#include <cmath>

namespace baton::server {
namespace {

constexpr size_t kMaxErrorsKept = 20;

}  // namespace

Json DlqReplayer::ToJson(const Job& job) {
  return {{"id", job.id},
          {"state", job.state},
          {"filter", job.filter},
          {"per_second", job.per_second},
          {"matched", job.ids.size()},
          {"replayed", job.replayed},
          {"skipped", job.skipped},
          {"failed", job.failed},
          {"remaining", job.ids.size() - job.next},
          {"errors", job.errors},
          {"started_at", IsoTime(job.started_at)},
          {"finished_at", job.finished_at == 0 ? Json(nullptr) : Json(IsoTime(job.finished_at))}};
}

Json DlqReplayer::Start(const std::string& ns, Json filter, std::vector<int64_t> ids,
                        double per_second) {
  auto job = std::make_shared<Job>();
  job->ns = ns;
  job->filter = std::move(filter);
  job->per_second = std::clamp(per_second, 0.001, kMaxPerSecond);
  job->ids = std::move(ids);
  job->started_at = host_->clock().Now();
  Json out;
  {
    std::lock_guard lock(mu_);
    job->id = "replay-" + std::to_string(++last_id_);
    MaybeFinishLocked(*job);  // nothing matched: done at once
    jobs_.push_back(job);
    // Forget the oldest finished jobs beyond the bound; running ones are kept.
    for (auto it = jobs_.begin(); jobs_.size() > kMaxJobs && it != jobs_.end();) {
      it = (*it)->state == "running" ? std::next(it) : jobs_.erase(it);
    }
    out = ToJson(*job);
  }
  if (!job->ids.empty()) {
    host_->Post([this, id = job->id](Engine&) { Tick(id); });
  }
  return out;
}

DlqReplayer::Job* DlqReplayer::FindLocked(const std::string& ns, const std::string& id) {
  for (auto& job : jobs_) {
    if (job->id == id && job->ns == ns) return job.get();
  }
  return nullptr;
}

Result<Json> DlqReplayer::Get(const std::string& ns, const std::string& id) const {
  std::lock_guard lock(mu_);
  Job* job = const_cast<DlqReplayer*>(this)->FindLocked(ns, id);
  if (job == nullptr) return Status(errc::kNotFound, "no replay job '" + id + "'");
  return ToJson(*job);
}

Json DlqReplayer::List(const std::string& ns) const {
  std::lock_guard lock(mu_);
  Json out = Json::array();
  for (const auto& job : jobs_) {
    if (job->ns == ns) out.push_back(ToJson(*job));
  }
  return out;
}

Result<Json> DlqReplayer::Cancel(const std::string& ns, const std::string& id) {
  std::lock_guard lock(mu_);
  Job* job = FindLocked(ns, id);
  if (job == nullptr) return Status(errc::kNotFound, "no replay job '" + id + "'");
  if (job->state == "running") {
    job->state = "cancelled";
    job->finished_at = host_->clock().Now();
  }
  return ToJson(*job);
}

void DlqReplayer::MaybeFinishLocked(Job& job) {
  if (job.state == "running" && job.next >= job.ids.size() && job.outstanding == 0) {
    job.state = "done";
    job.finished_at = host_->clock().Now();
  }
}

void DlqReplayer::Tick(const std::string& id) {
  std::shared_ptr<Job> job;
  int64_t entry = 0;
  std::string ns;
  {
    std::lock_guard lock(mu_);
    for (auto& j : jobs_) {
      if (j->id == id) job = j;
    }
    if (!job || job->state != "running" || job->next >= job->ids.size()) return;
    entry = job->ids[job->next++];
    ++job->outstanding;
    ns = job->ns;
    if (job->next < job->ids.size()) {
      // On a fixed grid from the start, so slow answers do not slow the rate down.
      const auto step = static_cast<TimeMs>(std::llround(1000.0 / job->per_second));
      const TimeMs at = job->started_at + static_cast<TimeMs>(job->next) * step;
      host_->loop()->ScheduleAt(at, [this, id] { Tick(id); });
    }
  }
  auto stored = host_->store()->GetDeadLetter(entry);
  if (!stored.ok() || stored->ns != ns || stored->status != kDeadLetterOpen) {
    std::lock_guard lock(mu_);
    --job->outstanding;
    if (stored.ok() || stored.status().code() == errc::kNotFound) {
      ++job->skipped;  // replayed or discarded since the job began (or gone)
    } else {
      ++job->failed;
      if (job->errors.size() < kMaxErrorsKept) {
        job->errors.push_back({{"id", entry},
                               {"code", stored.status().code()},
                               {"message", stored.status().message()}});
      }
    }
    MaybeFinishLocked(*job);
    return;
  }
  submitter_->Retry(stored->execution_id, stored->step_id,
                    [this, id, entry](Status st) { Answered(id, entry, st); });
}

void DlqReplayer::Answered(const std::string& id, int64_t entry, const Status& status) {
  std::lock_guard lock(mu_);
  for (auto& job : jobs_) {
    if (job->id != id) continue;
    --job->outstanding;
    if (status.ok()) {
      ++job->replayed;
    } else {
      ++job->failed;
      if (job->errors.size() < kMaxErrorsKept) {
        job->errors.push_back(
            {{"id", entry}, {"code", status.code()}, {"message", status.message()}});
      }
    }
    MaybeFinishLocked(*job);
  }
}

}  // namespace baton::server
