// The q-quantile of a sample by the nearest-rank method: the smallest value with at
// least q of the sample at or below it. With two samples p99 is the larger one (the
// interpolating index q * (n - 1), rounded down, gave the smaller: a p99 below most of
// what happened).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace baton::workers {

// `values` is reordered; 0 for an empty sample. q in (0, 1].
inline int64_t NearestRank(std::vector<int64_t>& values, double q) {
  if (values.empty()) return 0;
  const double rank = std::ceil(q * static_cast<double>(values.size()));
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, double(values.size()))) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return values[index];
}

}  // namespace baton::workers
