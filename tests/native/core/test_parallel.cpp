// The thread pool and the threaded kernels (attention, linear, norms, activations): every result is
// bitwise the same at 1, 2, 3 and 5 threads (the partition never splits a reduction), on awkward
// sizes and on sizes large enough to take each way of cutting the work; the pool's argument checks.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <deque>
#include <vector>

#include "attnkit/ops/activation.hpp"
#include "attnkit/ops/attention.hpp"
#include "attnkit/ops/linear.hpp"
#include "attnkit/ops/norm.hpp"
#include "attnkit/core/parallel.hpp"
#include "fixtures.hpp"

using namespace attnkit;
using attnkit_test::random_normal;

namespace {

// Restores one thread when a test ends, whatever it did.
struct Threads {
  explicit Threads(int n) { EXPECT_TRUE(set_thread_count(n).ok()); }
  ~Threads() { set_thread_count(1); }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs f() at 1 thread, then at each count in `counts`, and expects the same bits each time.
template <class F>
void expect_same_at_every_count(const char* what, F f) {
  std::vector<float> one;
  {
    Threads t(1);
    one = f();
  }
  for (int n : {2, 3, 5}) {
    Threads t(n);
    EXPECT_TRUE(same_bits(f(), one)) << what << " at " << n << " threads";
  }
}

}  // namespace

TEST(ThreadPool, RunsEveryTaskOnceAndNests) {
  for (int n : {1, 2, 4}) {
    Threads t(n);
    EXPECT_EQ(thread_count(), n);
    for (int i = 0; i < 1000 && threads_running() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(threads_running(), n);
    for (int count : {0, 1, 2, 7, 1000}) {
      std::vector<int> hits(count, 0);
      std::deque<std::atomic<int>> inner(count);  // a lone task's nested calls may run on several threads
      parallel_for(count, [&](int task, int thread) {
        EXPECT_LT(thread, n);
        ++hits[task];
        // Nested in a pool task: on the same thread. (A lone task runs on the caller outside the
        // pool, so its nested calls may use the pool.)
        parallel_for(3, [&](int, int t2) { inner[task] += t2 == thread || count == 1 ? 1 : 100; });
      });
      for (int i = 0; i < count; ++i) {
        EXPECT_EQ(hits[i], 1);
        EXPECT_EQ(inner[i], 3);
      }
    }
  }
}

TEST(ThreadPool, RefusesBadCounts) {
  EXPECT_EQ(set_thread_count(0).argument, "threads");
  EXPECT_EQ(set_thread_count(1.5).code, Code::invalid_argument);
  EXPECT_EQ(set_thread_count(kMaxThreads + 1).code, Code::out_of_range);
  EXPECT_EQ(thread_count(), 1);
}

TEST(ThreadPool, TaskCountKeepsSmallWorkOnOneThread) {
  Threads t(4);
  EXPECT_EQ(task_count(1000, 1 << 18, 16), 1);
  EXPECT_EQ(task_count(3.5 * (1 << 18), 1 << 18, 16), 3);
  EXPECT_EQ(task_count(1e12, 1 << 18, 16), 16);
}

TEST(ThreadedLinear, SameBitsAtEveryThreadCount) {
  unsigned seed = 11;
  // Row-split sizes (rows >= 16 * threads), column-split sizes (few rows, wide out) and awkward
  // edges around the 4-row blocks and the 64-column ranges.
  const int shapes[][3] = {{771, 65, 63},  {65, 771, 17},  {129, 130, 771}, {1, 771, 771},
                           {3, 257, 2049}, {5, 1024, 4099}, {17, 63, 3001},  {63, 771, 129},
                           {33, 257, 130},  {128, 256, 256}, {31, 65, 771}};
  for (const auto& sh : shapes) {
    const int rows = sh[0], in = sh[1], out = sh[2];
    const auto x = random_normal(static_cast<std::size_t>(rows) * in, seed++);
    const auto w = random_normal(static_cast<std::size_t>(in) * out, seed++);
    const auto b = random_normal(out, seed++);
    for (int layout = 0; layout < 2; ++layout)
      expect_same_at_every_count(("linear " + std::to_string(rows) + "x" + std::to_string(in) + "->" +
                                  std::to_string(out) + " layout " + std::to_string(layout)).c_str(), [&] {
        std::vector<float> y(static_cast<std::size_t>(rows) * out, -7.f);
        linear(y.data(), x.data(), rows, in, out, w.data(), static_cast<WeightLayout>(layout), b.data());
        return y;
      });
  }
}

TEST(ThreadedNormsAndActivations, SameBitsAtEveryThreadCount) {
  unsigned seed = 51;
  for (const auto& shape : {std::pair{771, 129}, std::pair{65, 4099}, std::pair{1031, 63}, std::pair{3, 7}}) {
    const int rows = shape.first, dim = shape.second;  // (C++17 lambdas cannot capture structured bindings)
    const auto x = random_normal(static_cast<std::size_t>(rows) * dim, seed++, 2.f, 0.5f);
    const auto g = random_normal(dim, seed++), b = random_normal(dim, seed++);
    expect_same_at_every_count("layer_norm", [&] {
      std::vector<float> y(x.size());
      EXPECT_TRUE(layer_norm(y.data(), x.data(), rows, dim, g.data(), b.data(), 1e-5).ok());
      return y;
    });
    expect_same_at_every_count("rms_norm", [&] {
      std::vector<float> y(x.size());
      EXPECT_TRUE(rms_norm(y.data(), x.data(), rows, dim, g.data(), 1e-6).ok());
      return y;
    });
    for (auto kind : {Activation::gelu, Activation::gelu_tanh, Activation::silu, Activation::relu})
      expect_same_at_every_count("activation", [&] {
        std::vector<float> y = x;
        activation(y.data(), y.size(), kind);
        return y;
      });
  }
}

namespace {

// One attention call through the validated entry (the scratch sized for the thread count).
std::vector<float> run_attention(const AttentionShape& s, const std::vector<float>& q, const std::vector<float>& k,
                                 const std::vector<float>& v, bool causal, bool weights, const std::vector<float>* add_mask,
                                 const std::vector<float>* slopes) {
  AttentionArgs a;
  a.shape = s;
  a.q = contiguous(q.data(), s.heads, s.q_len, s.head_dim);
  a.k = contiguous(k.data(), s.kv_heads, s.kv_len, s.head_dim);
  a.v = contiguous(v.data(), s.kv_heads, s.kv_len, s.v_dim);
  std::vector<float> out(static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.v_dim, 7.f);
  std::vector<float> w(weights ? static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.kv_len : 0, 7.f);
  a.out = contiguous(out.data(), s.heads, s.q_len, s.v_dim);
  a.weights = weights ? w.data() : nullptr;
  a.scale = 0.125f;
  a.causal = causal;
  a.alibi = slopes ? slopes->data() : nullptr;
  if (add_mask) {
    a.mask.kind = MaskKind::additive;
    a.mask.data = add_mask->data();
    a.mask.dims[0] = s.batch;
    a.mask.dims[3] = s.kv_len;
  }
  EXPECT_TRUE(attention(a).ok());
  out.insert(out.end(), w.begin(), w.end());
  return out;
}

}  // namespace

TEST(ThreadedAttention, SameBitsAtEveryThreadCount) {
  unsigned seed = 101;
  // {batch, heads, kv_heads, q_len, kv_len, head_dim, v_dim}: many (batch, head) pairs (a task
  // per pair), few pairs with long rows (super-blocks as tasks, K and V beyond the L2 threshold),
  // decoding (one query over a cache), GQA, awkward dims.
  const AttentionShape shapes[] = {{3, 4, 2, 65, 65, 17, 17},    {1, 2, 1, 771, 771, 63, 65},
                                   {1, 1, 1, 1031, 1031, 64, 64}, {2, 6, 3, 1, 771, 64, 64},
                                   {1, 3, 3, 5, 1029, 7, 3},     {5, 8, 8, 129, 129, 32, 32}};
  for (const auto& s : shapes) {
    const auto q = random_normal(static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.head_dim, seed++);
    const auto k = random_normal(static_cast<std::size_t>(s.batch) * s.kv_heads * s.kv_len * s.head_dim, seed++);
    const auto v = random_normal(static_cast<std::size_t>(s.batch) * s.kv_heads * s.kv_len * s.v_dim, seed++);
    std::vector<float> mask = random_normal(static_cast<std::size_t>(s.batch) * s.kv_len, seed++);
    for (std::size_t i = 0; i < mask.size(); i += 7) mask[i] = -std::numeric_limits<float>::infinity();
    std::vector<float> slopes(s.heads);
    for (int h = 0; h < s.heads; ++h) slopes[h] = 0.5f / (h + 1);
    for (int variant = 0; variant < 4; ++variant) {
      const bool causal = variant & 1, weights = variant == 2;
      const std::string what = "attention L=" + std::to_string(s.q_len) + "x" + std::to_string(s.kv_len) +
                               " heads " + std::to_string(s.heads) + " variant " + std::to_string(variant);
      expect_same_at_every_count(what.c_str(), [&] {
        return run_attention(s, q, k, v, causal, weights, variant == 3 ? &mask : nullptr, variant == 3 ? &slopes : nullptr);
      });
    }
  }
}
