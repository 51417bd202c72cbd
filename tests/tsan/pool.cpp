// The worker pool under ThreadSanitizer (scripts/sanitize.sh builds and runs it): thousands of
// jobs of 1-17 tasks at 2, 3 and 4 threads, each task run exactly once, with nested calls; any
// data race TSan sees fails the run.
#include <cstdio>
#include <vector>

#include "attnkit/core/parallel.hpp"

int main() {
  using namespace attnkit;
  long tasks = 0;
  for (int n : {2, 3, 4}) {
    if (!set_thread_count(n).ok()) return 1;
    for (int rep = 0; rep < 3000; ++rep) {
      const int count = 1 + rep % 17;
      std::vector<int> hits(count, 0), nested(count, 0);
      parallel_for(count, [&](int t, int) {
        ++hits[t];
        if (count > 1) parallel_for(2, [&](int, int) { ++nested[t]; });  // inline on this thread
      });
      for (int t = 0; t < count; ++t) {
        if (hits[t] != 1 || (count > 1 && nested[t] != 2)) {
          std::fprintf(stderr, "task %d of %d ran %d times (nested %d) at %d threads\n", t, count, hits[t], nested[t], n);
          return 1;
        }
      }
      tasks += count;
    }
  }
  set_thread_count(1);
  std::printf("pool under TSan: %ld tasks, each once\n", tasks);
  return 0;
}
