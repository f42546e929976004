// IdSet: a hash set of owners (unique_ptr, shared_ptr, raw pointers) of objects that carry
// their own id, found by that id.
//
// An unordered_map from a view of the id to the owner holds the view beside the pointer
// and the cached hash in every node: 48 bytes, against 32 here. Where every pending step
// has an entry (the engine's executions, the coordinator's dispatches), that is a pending
// step's cost.
//
// KeyOf is a stateless function object: KeyOf{}(const T&) -> std::string_view, the id,
// which must not change while the object is in a set. Lookups take anything that converts
// to std::string_view.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <unordered_set>

namespace baton {

// Not noexcept, on purpose: libstdc++ then keeps each node's hash in the node. Without
// it, a rehash and every probe past a bucket's first node hash the id inside the object
// again, a cache miss each: with 100,000 entries, several % of the engine's CPU.
template <class Ptr, class KeyOf>
struct IdHash {
  using is_transparent = void;
  size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  size_t operator()(const Ptr& p) const { return (*this)(KeyOf{}(*p)); }
};

template <class Ptr, class KeyOf>
struct IdEqual {
  using is_transparent = void;
  static std::string_view Id(std::string_view id) noexcept { return id; }
  static std::string_view Id(const Ptr& p) noexcept { return KeyOf{}(*p); }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const noexcept {
    return Id(a) == Id(b);
  }
};

template <class Ptr, class KeyOf>
using IdSet = std::unordered_set<Ptr, IdHash<Ptr, KeyOf>, IdEqual<Ptr, KeyOf>>;

}  // namespace baton
