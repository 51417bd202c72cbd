// A fixed pool of worker threads that the kernels share.
//
// The pool is started once (set_thread_count) and then reused by every call: no thread is created
// per call, and idle workers sleep on a condition variable (in wasm a futex wait: Atomics.wait),
// so they burn no core while nothing runs.
//
// Work is split into tasks [0, count); the calling thread and the workers take them in order from
// a shared counter, so tasks of uneven size (causal attention's query blocks) balance by work, not
// by count. A task must write only its own outputs and its result must not depend on which thread
// runs it: the kernels choose task boundaries that never split a reduction, so every result is
// bitwise the same at any thread count.
//
// Without threads (the single-thread wasm builds, ATTNKIT_THREADS=0) run_tasks runs every task on
// the caller and the thread count is fixed at 1.
#pragma once

#include <cstddef>
#include <type_traits>

#include "attnkit/core/status.hpp"

namespace attnkit {

// Threads that run tasks: the caller plus the pool's workers. 1 until set_thread_count.
int thread_count();

// Threads that have started and take tasks: the caller plus the workers running so far. Lags
// thread_count() briefly after set_thread_count (in wasm a worker starts once its Web Worker has
// loaded the module); meanwhile tasks run on the threads that have started.
int threads_running();

// Starts (or stops) workers so that thread_count() == n. n in [1, kMaxThreads]; n > 1 is refused
// with invalid_argument in a build without threads. Not to be called while tasks run.
constexpr int kMaxThreads = 64;
Status set_thread_count(double n);

// Runs fn(ctx, task, thread) for every task in [0, count) and returns when all have run.
// `thread` in [0, thread_count()) names the thread (for per-thread scratch); 0 is the caller.
// Called from inside a task, the tasks run on that thread (no nesting).
using TaskFn = void (*)(void* ctx, int task, int thread);
void run_tasks(int count, TaskFn fn, void* ctx);

// run_tasks with a callable f(task, thread).
template <class F>
void parallel_for(int count, F&& f) {
  using Fn = std::remove_reference_t<F>;
  run_tasks(count, [](void* ctx, int task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); },
            const_cast<void*>(static_cast<const void*>(&f)));
}

// The number of tasks worth making for `work` units (multiply-adds, roughly) split into pieces of
// at least `grain`, at most `max_tasks` (0: four per thread, so uneven pieces still balance):
// 1 (run on the caller) for small problems, where waking the workers costs more than it saves.
int task_count(double work, double grain, int max_tasks = 0);

// Runs f(begin, end) over [0, n) cut into up to `tasks` ranges whose starts are multiples of
// `align` (the last range ends at n): for kernels whose blocks, aligned from 0, must not move.
template <class F>
void parallel_ranges(std::size_t n, std::size_t align, int tasks, F&& f) {
  if (tasks <= 1 || n <= align) {
    f(std::size_t{0}, n);
    return;
  }
  const std::size_t chunk = ((n + tasks - 1) / tasks + align - 1) / align * align;
  parallel_for(static_cast<int>((n + chunk - 1) / chunk), [&](int t, int) {
    const std::size_t begin = t * chunk;
    f(begin, begin + chunk < n ? begin + chunk : n);
  });
}

}  // namespace attnkit
