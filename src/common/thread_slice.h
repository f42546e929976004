#pragma once

#include <chrono>

namespace baton {

// Asks the kernel to run the calling thread in short time slices.
//
// Why: Linux's scheduler (EEVDF, 6.6 on) lets the thread on a core finish its slice,
// 1.4 ms by default on 2 cores, before a thread it wakes gets that core. A server thread
// that sleeps until a request comes, answers in a fraction of a millisecond and sleeps
// again then waits behind whatever else runs there: measured here, an I/O thread woken
// for a request waited 1-5 ms behind a busy thread of the benchmark's client while the
// request's own work took 0.3 ms. A thread that asks for a shorter slice (Linux 6.12 on:
// `sched_attr.sched_runtime` for SCHED_OTHER) gets the core at its wake-up instead. It
// gets no more CPU time than before, only shorter turns more often. Threads and processes
// the thread starts later get the kernel's default (SCHED_FLAG_RESET_ON_FORK).
//
// Best effort: false where the system call is refused, for a thread that is not
// SCHED_OTHER (one an operator moved to SCHED_BATCH or a real-time policy keeps it), or
// for a zero `slice`, with nothing changed. A kernel older than 6.12 accepts the call but
// ignores the slice: false too, but the thread keeps the reset-on-fork flag (what it
// starts does not inherit a negative nice value). The kernel keeps slices within
// 0.1-100 ms.
bool RequestShortSlices(std::chrono::microseconds slice);

// The calling thread's slice as the kernel reports it (Linux 6.12 on: its own, else the
// default); zero where the kernel reports none.
std::chrono::microseconds OwnSlice();

}  // namespace baton
