// The steps of a binary min-heap whose entries know where they are: `place(i, e)` stores
// `e` at heap[i] and tells the entry's owner its new position (TimerQueue's slots, the
// engine's StepDeadlines' steps). That position is what lets an entry be removed from the
// middle in O(log n) instead of being left to fire for nothing.
//
// Heap: a random-access container of entries (vector, deque); before(a, b): a's strict
// order before b.
#pragma once

#include <cstddef>

namespace baton::indexed_heap {

template <class Heap, class Before, class Place>
void SiftUp(Heap& heap, size_t i, const Before& before, const Place& place) {
  const auto e = heap[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!before(e, heap[parent])) break;
    place(i, heap[parent]);
    i = parent;
  }
  place(i, e);
}

template <class Heap, class Before, class Place>
void SiftDown(Heap& heap, size_t i, const Before& before, const Place& place) {
  const auto e = heap[i];
  const size_t n = heap.size();
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap[child + 1], heap[child])) ++child;
    if (!before(heap[child], e)) break;
    place(i, heap[child]);
    i = child;
  }
  place(i, e);
}

// Appends `e` and moves it up to where it belongs.
template <class Heap, class Entry, class Before, class Place>
void Push(Heap& heap, const Entry& e, const Before& before, const Place& place) {
  heap.push_back(e);
  place(heap.size() - 1, e);
  SiftUp(heap, heap.size() - 1, before, place);
}

// Removes heap[i] (its owner is the caller's to update): the last entry fills the hole,
// then moves up or down to where it belongs.
template <class Heap, class Before, class Place>
void Erase(Heap& heap, size_t i, const Before& before, const Place& place) {
  const auto last = heap.back();
  heap.pop_back();
  if (i >= heap.size()) return;
  place(i, last);
  if (i > 0 && before(last, heap[(i - 1) / 2])) {
    SiftUp(heap, i, before, place);
  } else {
    SiftDown(heap, i, before, place);
  }
}

}  // namespace baton::indexed_heap
