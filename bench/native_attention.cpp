// Times the native build's attention (the same C++ as the wasm module, xsimd on this CPU's SSE4.1
// arch by default) for bench/attention.mjs: prints one JSON line per length.
//   attnkit_bench_attention L [L ...]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "attnkit/ops/attention.hpp"

using namespace attnkit;

int main(int argc, char** argv) {
  const int H = 12, d = 64;
  for (int a = 1; a < argc; ++a) {
    const int L = std::atoi(argv[a]);
    std::vector<float> q(static_cast<std::size_t>(H) * L * d), k(q.size()), v(q.size()), out(q.size());
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    for (auto* x : {&q, &k, &v})
      for (auto& e : *x) e = u(rng);
    for (int causal = 1; causal >= 0; --causal) {
      AttentionArgs args;
      const std::size_t bs = static_cast<std::size_t>(H) * L * d, hs = static_cast<std::size_t>(L) * d;
      args.shape = {1, H, H, L, L, d, d};
      args.q = {q.data(), bs, hs, static_cast<std::size_t>(d)};
      args.k = {k.data(), bs, hs, static_cast<std::size_t>(d)};
      args.v = {v.data(), bs, hs, static_cast<std::size_t>(d)};
      args.out = {out.data(), bs, hs, static_cast<std::size_t>(d)};
      args.scale = 1.f / std::sqrt(static_cast<float>(d));
      args.causal = causal;
      std::vector<double> ms;
      const int reps = L >= 4096 ? 3 : L >= 2048 ? 5 : 9;
      for (int r = 0; r < reps + 1; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        if (!attention(args).ok()) return 1;
        const auto t1 = std::chrono::steady_clock::now();
        if (r) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      std::printf("{\"L\":%d,\"causal\":%s,\"min\":%.4f,\"median\":%.4f}\n", L, causal ? "true" : "false", ms.front(),
                  ms[ms.size() / 2]);
    }
  }
  return 0;
}
