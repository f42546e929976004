// A step's key in the observers' maps of attempt starts (ServerMetrics, ActivityWindow):
// the hashes of its execution's and its own id instead of the ids. Each map holds an
// entry per dispatched step, waiting ones included, and two id strings there cost ~100
// bytes a step. Two steps whose both hashes collide (about 1 in 2^64 a pair) would share
// an entry: one duration sample would be wrong, nothing else.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

namespace baton::server {

struct StepKey {
  uint64_t execution = 0;
  uint64_t step = 0;
  auto operator<=>(const StepKey&) const = default;

  // The first and last keys an execution's steps can have: its entries lie between, in
  // an ordered map.
  static StepKey First(const std::string& execution_id) {
    return {std::hash<std::string>{}(execution_id), 0};
  }
  static StepKey Last(const std::string& execution_id) {
    return {std::hash<std::string>{}(execution_id), std::numeric_limits<uint64_t>::max()};
  }
};

inline StepKey StepKeyOf(const std::string& execution_id, const std::string& step_id) {
  return {std::hash<std::string>{}(execution_id), std::hash<std::string>{}(step_id)};
}

struct StepKeyHash {
  size_t operator()(const StepKey& k) const {
    return static_cast<size_t>(k.execution ^ (k.step * 0x9e3779b97f4a7c15ULL));
  }
};

}  // namespace baton::server
