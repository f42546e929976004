// Result caching (a step's `cache:`): before a step runs, its key -- a SHA-256 of what it
// is asked to do -- is looked up; a hit completes it `cached` with the recorded output.
// A miss runs it, and its successful output is stored in the commit that completes it.
// Identical steps running at once share one run (single-flight): the others wait for
// its result, and run themselves only should it fail.
#include "engine/engine_impl.h"

#include "expr/template.h"

#include <openssl/evp.h>

namespace baton {

using engine::ExecState;
using engine::StepState;

namespace {

std::string Sha256Hex(const std::string& data) {
  // Fetched once: OpenSSL 3 looks EVP_sha256() up in its providers on every digest, which
  // cost more than the rest of a cache lookup together.
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, kSha256 ? kSha256 : EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

const char* ToString(CacheEviction e) {
  switch (e) {
    case CacheEviction::kLru:
      return "lru";
    case CacheEviction::kLfu:
      return "lfu";
    case CacheEviction::kTtl:
      return "ttl";
  }
  return "lru";
}

std::optional<CacheEviction> ParseCacheEviction(std::string_view s) {
  for (CacheEviction e : {CacheEviction::kLru, CacheEviction::kLfu, CacheEviction::kTtl}) {
    if (s == ToString(e)) return e;
  }
  return std::nullopt;
}

Result<std::string> Engine::Impl::CacheKeyFor(const ExecState& ex, int step, const Json& spec) {
  const StepDef& def = *ex.steps[step].def;
  const Json& key = def.extra().cache->key;
  if (key.is_string()) {
    // The workflow's own key: shared by whatever steps of the namespace name it.
    engine::ExecScope scope(ex);
    Result<Json> rendered = expr::Render(key, scope);
    if (!rendered.ok()) return rendered.status();
    return Sha256Hex("key\n" +
                     (rendered->is_string() ? rendered->get<std::string>() : Dump(*rendered)));
  }
  // Canonical JSON: objects dump with their keys sorted.
  Json material = {
      {"workflow", ex.def->name}, {"step", def.id}, {"type", ToString(def.type)}, {"spec", spec}};
  return Sha256Hex(Dump(material));
}

bool Engine::Impl::LookUpCache(const ExecPtr& ex, int step, const Json& spec) {
  StepState& st = ex->steps[step];
  Result<std::string> key = CacheKeyFor(*ex, step, spec);
  if (!key.ok()) {
    st.resolved_input = MakeSpec(spec);
    FailAttempt(ex, step, StepStatus::kFailed, key.status(), nullptr);
    return true;
  }
  const TimeMs now = loop_->Now();
  std::vector<CacheKey> expired;
  const CacheEntryRecord* hit = cache_.Find(ex->rec.ns, *key, now, &expired);
  DeleteCacheEntries(expired);
  st.rec.attempts -= 1;  // a hit or a wait runs nothing
  if (hit) {
    ServeCacheHit(ex, step, *key);
    return true;
  }
  auto [flight, first] = cache_flights_.try_emplace(ex->rec.ns + '\n' + *key);
  if (!first) {
    // An identical step runs: this one takes its result (or runs, should it fail).
    st.rec.status = StepStatus::kReady;
    st.rec.started_at = 0;
    st.Guards().cache_waiting = true;
    flight->second.waiters.emplace_back(ex, step);
    Emit(*ex, "step.cache_wait", step, {{"key", *key}, {"running", flight->second.leader}});
    return true;
  }
  st.rec.attempts += 1;
  flight->second.leader = ex->rec.id + "/" + st.def->id;
  ++stats_.cache_misses;
  st.Guards().cache_key = *key;
  return false;
}

void Engine::Impl::ServeCacheHit(const ExecPtr& ex, int step, const std::string& key) {
  StepState& st = ex->steps[step];
  const TimeMs now = loop_->Now();
  std::vector<CacheKey> expired;
  const CacheEntryRecord* entry = cache_.Find(ex->rec.ns, key, now, &expired);
  DeleteCacheEntries(expired);
  if (entry == nullptr) return MakeReady(ex, step);  // gone meanwhile: run it
  batch_.cache_touches.push_back(cache_.Hit(ex->rec.ns, key, now));
  ++stats_.cache_hits;
  if (st.guards) st.guards->cache_waiting = false;
  st.rec.output = entry->output;
  st.rec.error = nullptr;
  st.rec.exit_code = -1;
  if (!st.rec.started_at) st.rec.started_at = now;
  st.rec.completed_at = now;
  MarkStepDirty(ex, step);
  Emit(*ex, "step.cached", step,
       {{"key", key}, {"execution_id", entry->execution_id}, {"created_at", entry->created_at}});
  if (st.def->extra().set_vars.is_object()) {
    if (Status set = SetVars(ex, step); !set.ok()) {
      st.rec.attempts += 1;  // the failure needs an attempt to be about
      return FailAttempt(ex, step, StepStatus::kFailed, set, nullptr);
    }
  }
  FinishStep(ex, step, StepStatus::kCached);
}

void Engine::Impl::StoreCacheResult(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  const std::string key = std::move(st.Guards().cache_key);
  st.Guards().cache_key.clear();
  const TimeMs now = loop_->Now();
  CacheEntryRecord e;
  e.ns = ex->rec.ns;
  e.key = key;
  e.workflow = ex->def->name;
  e.step_id = st.def->id;
  e.execution_id = ex->rec.id;
  e.output = st.rec.output;
  e.bytes = static_cast<int64_t>(Dump(e.output).size());
  e.created_at = now;
  e.expires_at = st.def->extra().cache->ttl ? now + st.def->extra().cache->ttl->count() : 0;
  std::vector<CacheKey> evicted;
  if (cache_.Insert(e, now, &evicted)) batch_.cache_entries.push_back(std::move(e));
  DeleteCacheEntries(evicted);
  EndCacheFlight(ex->rec.ns + '\n' + key, /*stored=*/true, key);
}

void Engine::Impl::AbandonCacheFlight(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  const std::string key = std::move(st.Guards().cache_key);
  st.Guards().cache_key.clear();
  EndCacheFlight(ex->rec.ns + '\n' + key, /*stored=*/false, key);
}

void Engine::Impl::EndCacheFlight(const std::string& flight_id, bool stored,
                                  const std::string& key) {
  auto it = cache_flights_.find(flight_id);
  if (it == cache_flights_.end()) return;
  std::vector<std::pair<std::weak_ptr<ExecState>, int>> waiters = std::move(it->second.waiters);
  cache_flights_.erase(it);
  if (waiters.empty()) return;
  if (stored) {
    for (auto& [weak, step] : waiters) {
      ExecPtr ex = weak.lock();
      if (!ex || ex->finished || !ex->steps[step].CacheWaiting() ||
          ex->steps[step].rec.status != StepStatus::kReady) {
        continue;
      }
      ServeCacheHit(ex, step, key);
    }
    return;
  }
  // The run failed or was stopped: the waiters run themselves (the first to dispatch
  // leads the next flight). Later, in a turn of their own: this may be a store failure's
  // clean-up, where no step may move.
  loop_->Post([this, alive = std::weak_ptr<bool>(alive_), waiters = std::move(waiters)] {
    if (alive.expired()) return;
    TurnGuard turn(this);
    for (auto& [weak, step] : waiters) {
      ExecPtr ex = weak.lock();
      if (!ex || ex->finished || !ex->steps[step].CacheWaiting() ||
          ex->steps[step].rec.status != StepStatus::kReady) {
        continue;
      }
      ex->steps[step].Guards().cache_waiting = false;
      MakeReady(ex, step);
    }
  });
}

void Engine::Impl::DeleteCacheEntries(const std::vector<CacheKey>& keys) {
  for (const CacheKey& k : keys) {
    batch_.cache_deletes.push_back(k);
    ++stats_.cache_evictions;
  }
}

void Engine::Impl::AdoptCache(std::vector<CacheEntryRecord> entries) {
  std::vector<CacheKey> dropped;
  cache_.Load(std::move(entries), loop_->Now(), &dropped);
  if (dropped.empty()) return;
  TurnGuard turn(this);
  DeleteCacheEntries(dropped);
}

void Engine::Impl::MergeCache(std::vector<CacheEntryRecord> entries,
                              const std::vector<CacheKey>& deleted) {
  for (const CacheKey& k : deleted) cache_.Erase(k.ns, k.key);
  std::vector<CacheKey> dropped;
  const TimeMs now = loop_->Now();
  for (CacheEntryRecord& e : entries) {
    // This instance's own entries come back too, and a hit changes only the counts.
    const CacheEntryRecord* held = cache_.Peek(e.ns, e.key);
    if (held != nullptr && held->created_at == e.created_at &&
        held->execution_id == e.execution_id) {
      continue;
    }
    cache_.Insert(std::move(e), now, &dropped);
  }
  if (dropped.empty()) return;
  TurnGuard turn(this);
  DeleteCacheEntries(dropped);
}

Result<size_t> Engine::Impl::ClearCache(const std::string& ns, const std::string& key,
                                        const std::string& workflow, const std::string& step_id) {
  std::vector<CacheKey> keys;
  if (!key.empty()) {
    if (!cache_.Erase(ns, key)) {
      return Status(errc::kNotFound, "no cache entry '" + key + "' in namespace " + ns);
    }
    keys.push_back({ns, key});
  } else {
    for (const CacheEntryRecord* e : cache_.List(ns, workflow, step_id)) {
      keys.push_back({e->ns, e->key});
    }
    for (const CacheKey& k : keys) cache_.Erase(k.ns, k.key);
  }
  if (keys.empty()) return size_t{0};
  TurnGuard turn(this);
  DeleteCacheEntries(keys);
  return keys.size();
}

Status LoadCache(ExecutionStore* store, Engine* engine) {
  Result<std::vector<CacheEntryRecord>> entries = store->ListCacheEntries("");
  if (!entries.ok()) return entries.status();
  engine->AdoptCache(std::move(entries.value()));
  return Status::Ok();
}

}  // namespace baton
