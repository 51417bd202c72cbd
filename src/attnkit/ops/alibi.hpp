// ALiBi (Press et al. 2022, "Train Short, Test Long"): a per-head linear distance penalty added to
// the attention scores, -m_h * (i - j). The bias itself is applied inside the attention kernel
// (AttentionArgs::alibi), never materialised as [heads, L, L].
#pragma once

#include "attnkit/core/status.hpp"

namespace attnkit {

// The paper's head slopes, out[h] for h < heads (heads in [1, 4096]):
//   n = heads a power of two: m_h = 2^(-8 (h + 1) / n);
//   otherwise, with p the largest power of two below heads: the p slopes for p heads, then
//   every other slope of the 2p-head sequence (2^(-4 (2k + 1) / p), k = 0, 1, ...) for the rest
//   (as BLOOM's build_alibi_tensor does).
Status alibi_slopes(float* out, double heads);

}  // namespace attnkit
