#include "store/fault_injection.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace baton {
namespace {

bool ReadNumber(std::string_view text, uint64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

}  // namespace

Result<FaultInjectingStore::Plan> FaultInjectingStore::ParsePlan(std::string_view text) {
  Plan plan;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t eq = part.find('=');
    std::string_view key = part.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
    uint64_t* field = key == "from" ? &plan.from : key == "count" ? &plan.count : nullptr;
    if (field == nullptr || !ReadNumber(value, field)) {
      return Status(errc::kInvalidArgument, "BATON_FAULT_STORE: cannot read '" + std::string(part) +
                                                "' (expected from=N[,count=M])");
    }
  }
  return plan;
}

FaultInjectingStore::FaultInjectingStore(std::unique_ptr<Store> target, Plan plan)
    : StoreWrapper(target.get()), owned_(std::move(target)), plan_(plan) {}

Status FaultInjectingStore::Decide() {
  const uint64_t n = ++commits_;
  const bool planned =
      plan_.from != 0 && n >= plan_.from && (plan_.count == 0 || n < plan_.from + plan_.count);
  if (!planned && !failing_) return Status::Ok();
  ++refused_;
  return Status(errc::kStore,
                "database or disk is full (fault injected at commit " + std::to_string(n) + ")");
}

Status FaultInjectingStore::Commit(std::span<const WriteBatch* const> batches) {
  if (Status s = Decide(); !s.ok()) return s;
  return StoreWrapper::Commit(batches);
}

Status FaultInjectingStore::CommitOwned(WriteBatch&& batch) {
  if (Status s = Decide(); !s.ok()) return s;
  return StoreWrapper::CommitOwned(std::move(batch));
}

Result<std::unique_ptr<Store>> WithFaultsFromEnv(std::unique_ptr<Store> store) {
  const char* text = std::getenv("BATON_FAULT_STORE");
  if (text == nullptr || *text == '\0') return store;
  Result<FaultInjectingStore::Plan> plan = FaultInjectingStore::ParsePlan(text);
  if (!plan.ok()) return plan.status();
  std::fprintf(stderr, "baton: BATON_FAULT_STORE=%s: commits will be refused as planned\n", text);
  return std::unique_ptr<Store>(std::make_unique<FaultInjectingStore>(std::move(store), *plan));
}

}  // namespace baton
