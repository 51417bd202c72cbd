#include "attnkit/ops/alibi.hpp"

#include <cmath>

namespace attnkit {

Status alibi_slopes(float* out, double heads) {
  Status s = check_integer("numHeads", heads, 1, 4096);
  if (!s.ok()) return s;
  const int n = static_cast<int>(heads);
  int p = 1;
  while (p * 2 <= n) p *= 2;
  for (int h = 0; h < p; ++h) out[h] = static_cast<float>(std::exp2(-8.0 * (h + 1) / p));
  for (int k = 0; p + k < n; ++k) out[p + k] = static_cast<float>(std::exp2(-4.0 * (2 * k + 1) / p));
  return s;
}

}  // namespace attnkit
