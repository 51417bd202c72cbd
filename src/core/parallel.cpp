// The worker pool behind run_tasks (contract in attnkit/core/parallel.hpp).
//
// One job at a time (the JavaScript side calls in from one thread). The caller publishes a job
// under the lock and wakes the workers; everyone takes tasks from `next_`; the caller waits until
// every task has finished and no worker still holds the job, then closes it. A worker that wakes
// after the job closed (or that the browser started late: a pool worker whose Web Worker was not
// ready) finds nothing to join, so the caller never waits on a thread that has not started.
//
// Waking a sleeping thread costs tens of microseconds (a futex; more in a VM), and a layer's
// forward pass dispatches every few hundred. So after a job a worker first watches the generation
// counter for a short while (kSpin loads, about 0.1 ms) before it sleeps on the condition
// variable, and the caller watches the finished count before it sleeps: back-to-back jobs find
// everyone awake, and an idle pool stops using the cores within 0.1 ms.
#include "attnkit/core/parallel.hpp"

#include <algorithm>
#include <cmath>

#if ATTNKIT_THREADS
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attnkit {

int task_count(double work, double grain, int max_tasks) {
  if (max_tasks == 0) max_tasks = 4 * thread_count();
  if (!(work > 0) || !(grain > 0) || max_tasks <= 1 || thread_count() <= 1) return 1;
  return static_cast<int>(std::clamp(std::floor(work / grain), 1.0, static_cast<double>(max_tasks)));
}

#if !ATTNKIT_THREADS

int thread_count() { return 1; }
int threads_running() { return 1; }

Status set_thread_count(double n) {
  Status s = check_integer("threads", n, 1, kMaxThreads);
  if (s.ok() && n != 1)
    s = Status::error(Code::invalid_argument, "threads", "this build has no threads: threads must be 1, got " + show_number(n));
  return s;
}

void run_tasks(int count, TaskFn fn, void* ctx) {
  for (int t = 0; t < count; ++t) fn(ctx, t, 0);
}

#else

namespace {

// Atomic loads a waiting thread makes before it sleeps (~0.1 ms).
constexpr int kSpin = 1 << 16;

thread_local bool in_task = false;
thread_local int current_thread = 0;  // the `thread` of the task this thread runs

class Pool {
 public:
  ~Pool() { resize(1); }

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  int running() const { return running_.load(std::memory_order_acquire) + 1; }

  void resize(int n) {
    if (n == threads()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
    stop_ = false;
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  void run(int count, TaskFn fn, void* ctx) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = fn;
      ctx_ = ctx;
      count_ = count;
      next_.store(0, std::memory_order_relaxed);
      finished_ = 0;
      open_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    take(0);
    for (int i = 0; i < kSpin && !done(); ++i) {
    }
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return done(); });
    open_ = false;
  }

 private:
  // Runs tasks until none is left; counts them as finished.
  void take(int thread) {
    in_task = true;
    current_thread = thread;
    int ran = 0;
    for (int t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < count_; ++ran) fn_(ctx_, t, thread);
    in_task = false;
    if (ran) {
      std::lock_guard<std::mutex> lock(mu_);
      finished_.fetch_add(ran, std::memory_order_release);
    }
  }

  // Every task finished and no worker still inside take() (read under the lock to decide).
  bool done() const { return finished_.load(std::memory_order_acquire) == count_ && holders_.load(std::memory_order_acquire) == 0; }

  void work(int thread) {
    unsigned long seen = 0;
    running_.fetch_add(1, std::memory_order_release);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || (open_ && generation_.load(std::memory_order_relaxed) != seen); });
      if (stop_) {
        running_.fetch_sub(1, std::memory_order_release);
        return;
      }
      seen = generation_.load(std::memory_order_relaxed);
      ++holders_;
      lock.unlock();
      take(thread);
      lock.lock();
      --holders_;
      if (done()) done_.notify_one();
      // Watch for the next job a little while before sleeping (the lock is free meanwhile).
      lock.unlock();
      for (int i = 0; i < kSpin && generation_.load(std::memory_order_acquire) == seen && !stop_.load(std::memory_order_relaxed); ++i) {
      }
      lock.lock();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  bool open_ = false;
  std::atomic<bool> stop_{false};  // set under the lock; read while spinning too
  std::atomic<unsigned long> generation_{0};
  std::atomic<int> holders_{0}, finished_{0}, running_{0};
  int count_ = 0;
  std::atomic<int> next_{0};
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

int thread_count() { return pool().threads(); }
int threads_running() { return pool().running(); }

Status set_thread_count(double n) {
  Status s = check_integer("threads", n, 1, kMaxThreads);
  if (s.ok()) pool().resize(static_cast<int>(n));
  return s;
}

void run_tasks(int count, TaskFn fn, void* ctx) {
  if (count <= 0) return;
  if (count == 1 || in_task || thread_count() == 1) {
    // Nested (or alone): on this thread, under its own index, so per-thread scratch stays its own.
    const int thread = in_task ? current_thread : 0;
    for (int t = 0; t < count; ++t) fn(ctx, t, thread);
    return;
  }
  pool().run(count, fn, ctx);
}

#endif

}  // namespace attnkit
