// xsimd attention kernel (contract in attnkit/ops/attention.hpp): tiled online softmax.
//
// Per (batch, kv head) the keys are packed once into panels of kNR keys, [Lk/kNR][d][kNR], so
// the score microkernel reads them sequentially with keys in SIMD lanes. Then, per query head of
// the group and per block of kMR queries:
//   for each key tile (kTile keys, stopping at the block's causal limit):
//     S = Q_blk K_tile^T                       (qk_tile: kMR x kNR register block)
//     s = S + alibi + mask; m' = max(m, rowmax s); p = 2^(s - m')
//     l = l * 2^(m - m') + sum p;  O = O * 2^(m - m') + P V_tile   (pv_tile)
//   out = O / l   (0 where every key was masked)
// Scores are kept in log2 units: the queries are pre-multiplied by scale * log2(e) when they are
// broadcast for the block, so the softmax needs neither a scaling pass nor a multiply in exp.
// An additive mask is scaled by log2(e) too, saturating at -FLT_MAX: Hugging Face's finfo.min
// (-3.4e38) would overflow to -inf and a row of it read as masked, where PyTorch gives a uniform
// softmax. attention() runs this kernel only on finite inputs far from overflow, whose masks hold
// no other value beyond that range (attention_needs_reference), so no NaN or +inf reaches it.
// Without FMA in SIMD128 each multiply-add is two instructions; the microkernels load both
// operands as whole vectors (queries and probabilities are stored pre-broadcast) so that loads
// and loop overhead stay small next to the arithmetic.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "attnkit/ops/attention.hpp"
#include "attnkit/core/parallel.hpp"
#include "attnkit/core/simd_arch.hpp"
#include "ops/simd/exp.hpp"

namespace attnkit::simd {

namespace {

using bf = vfloat;
constexpr int kN = static_cast<int>(kLanes);
constexpr int kMR = 4;         // queries per block
constexpr int kNR = 2 * kN;    // keys per score microkernel: two vectors
// Keys per tile. Each tile costs a fixed amount besides its keys (per row: the softmax's setup,
// max and sum; per block: loading and storing the output accumulators), which short rows feel:
// at L = 512, tiles of 512 keys measured 5 % faster than tiles of 128, and no slower at 2048 or
// 4096. A tile's V slice (128 KB at d = 64) is then read from L2 rather than L1.
constexpr int kTile = 512;
constexpr int kBlocks = 4;     // query blocks that share one key/value tile
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline int round_up(int n, int m) { return (n + m - 1) / m * m; }

// The register block both microkernels share: kMR rows x two vectors of accumulators, updated by
// acc[r][0..1] += w[r] * (v0, v1), with the kMR broadcast weights loaded from w (one vector each).
struct block4x2 {
  bf a[kMR][2];

  void madd(const float* w, const bf& v0, const bf& v1) {
    for (int r = 0; r < kMR; ++r) {
      const bf x = bf::load_aligned(w + r * kN);
      a[r][0] = attnkit::madd(x, v0, a[r][0]);
      a[r][1] = attnkit::madd(x, v1, a[r][1]);
    }
  }
  void zero() {
    for (auto& row : a) row[0] = row[1] = bf(0.f);
  }
  // Row r at rows[r] (two vectors each).
  void load(float* const rows[kMR]) {
    for (int r = 0; r < kMR; ++r) a[r][0] = bf::load_unaligned(rows[r]), a[r][1] = bf::load_unaligned(rows[r] + kN);
  }
  void store(float* const rows[kMR]) const {
    for (int r = 0; r < kMR; ++r) a[r][0].store_unaligned(rows[r]), a[r][1].store_unaligned(rows[r] + kN);
  }
};

// S[r][j] = dot(q[r], key j) for r < kMR and j < np (a multiple of kNR). `qs` holds the block's
// queries pre-broadcast, [d][kMR] vectors (one load each instead of a scalar load + splat);
// `panel` points at the first packed panel of the tile: kNR keys x d, key-minor.
template <class Arch>
struct qk_tile {
  void operator()(Arch, const float* qs, const float* panel, int d, int np, float* S, int lds) const {
    for (int j = 0; j < np; j += kNR, panel += static_cast<std::size_t>(d) * kNR) {
      block4x2 acc;
      acc.zero();
      const float* k = panel;
      const float* q = qs;
      for (int c = 0; c < d; ++c, k += kNR, q += kMR * kN) acc.madd(q, bf::load_aligned(k), bf::load_aligned(k + kN));
      float* const rows[kMR] = {S + j, S + lds + j, S + 2 * lds + j, S + 3 * lds + j};
      acc.store(rows);
    }
  }
};

// O[r][:] += sum_{j < n} p[r][j] * v_j for r < kMR; v_j = v + j * vstride, O rows of dv floats.
// `pb` holds the probabilities pre-broadcast, [n][kMR] vectors.
template <class Arch>
struct pv_tile {
  void operator()(Arch, const float* pb, const float* v, std::size_t vstride, int n, float* O, int dv) const {
    float *o0 = O, *o1 = O + dv, *o2 = O + 2 * dv, *o3 = O + 3 * dv;
    int c = 0;
    for (; c + 2 * kN <= dv; c += 2 * kN) {
      float* const rows[kMR] = {o0 + c, o1 + c, o2 + c, o3 + c};
      block4x2 acc;
      acc.load(rows);
      const float* vj = v + c;
      const float* p = pb;
      for (int j = 0; j < n; ++j, vj += vstride, p += kMR * kN)
        acc.madd(p, bf::load_unaligned(vj), bf::load_unaligned(vj + kN));
      acc.store(rows);
    }
    for (; c + kN <= dv; c += kN) {
      bf a0 = bf::load_unaligned(o0 + c), a1 = bf::load_unaligned(o1 + c);
      bf a2 = bf::load_unaligned(o2 + c), a3 = bf::load_unaligned(o3 + c);
      const float* vj = v + c;
      const float* p = pb;
      for (int j = 0; j < n; ++j, vj += vstride, p += kMR * kN) {
        const bf x = bf::load_unaligned(vj);
        a0 = attnkit::madd(bf::load_aligned(p), x, a0); a1 = attnkit::madd(bf::load_aligned(p + kN), x, a1);
        a2 = attnkit::madd(bf::load_aligned(p + 2 * kN), x, a2); a3 = attnkit::madd(bf::load_aligned(p + 3 * kN), x, a3);
      }
      a0.store_unaligned(o0 + c); a1.store_unaligned(o1 + c);
      a2.store_unaligned(o2 + c); a3.store_unaligned(o3 + c);
    }
    for (; c < dv; ++c) {  // scalar tail: lane 0 of each broadcast vector
      float s0 = o0[c], s1 = o1[c], s2 = o2[c], s3 = o3[c];
      const float* vj = v + c;
      const float* p = pb;
      for (int j = 0; j < n; ++j, vj += vstride, p += kMR * kN) {
        s0 += p[0] * *vj; s1 += p[kN] * *vj; s2 += p[2 * kN] * *vj; s3 += p[3 * kN] * *vj;
      }
      o0[c] = s0; o1[c] = s1; o2[c] = s2; o3[c] = s3;
    }
  }
};

template <unsigned T>
struct lane {
  static constexpr unsigned get(unsigned, unsigned) { return T; }
};

// Writes the kN probabilities in p (keys j .. j + kN of row r) broadcast into pb[j + t][r].
template <class Arch, unsigned... T>
inline void broadcast_lanes(const bf& p, float* pb_j_r, std::integer_sequence<unsigned, T...>) {
  using bu = xsimd::batch<uint32_t, Arch>;
  (xsimd::swizzle(p, xsimd::make_batch_constant<bu, lane<T>>()).store_aligned(pb_j_r + T * kMR * kN), ...);
}

// Everything one score row needs besides its numbers.
struct RowContext {
  float slope;    // 0 = no ALiBi
  float softcap;  // in log2 units (softcap * log2 e); 0 = none
  int position;   // the query's position p_i
  bool causal;
  const MaskView* mask;
  std::size_t mask_row;
};

// Turns row s[0..np) (dots of keys j0 + jj, already times scale * log2 e) into probabilities
// p = 2^(score - m') in log2 units, updating the running max m and sum l; writes p broadcast
// into pb (row r of [np][kMR] vectors); returns alpha = 2^(m_old - m'), the factor
// for the row's partial output. Keys jj >= n are padding.
template <class Arch>
struct softmax_tile_row {
  float operator()(Arch, float* s, float* pb, int r, int j0, int n, int np, const RowContext& rc, float& m,
                   float& l) const {
    constexpr float kLog2e = 1.44269504088896341f;
    // The soft-cap c tanh(x / c) of the scaled dots, in log2 units (c' = c log2 e, x' = x log2 e).
    if (rc.softcap > 0.f)
      for (int jj = 0; jj < n; ++jj) s[jj] = rc.softcap * std::tanh(s[jj] / rc.softcap);
    if (rc.slope != 0.f) {  // ALiBi: + slope * (j - p), in log2 units
      const bf slope(rc.slope * kLog2e);
      alignas(64) float iota[kN];
      for (int t = 0; t < kN; ++t) iota[t] = static_cast<float>(t);
      bf dist = bf::load_aligned(iota) + bf(static_cast<float>(j0 - rc.position));
      for (int jj = 0; jj < np; jj += kN, dist += bf(static_cast<float>(kN)))
        xsimd::fma(slope, dist, bf::load_aligned(s + jj)).store_aligned(s + jj);
    }
    if (rc.mask->kind == MaskKind::additive) {
      const float* mrow = static_cast<const float*>(rc.mask->data) + rc.mask_row + j0;
      // -inf stays -inf (masked); a finite value saturates at the lowest float.
      constexpr float kLowest = std::numeric_limits<float>::lowest();
      const bf log2e(kLog2e), lowest(kLowest);
      int jj = 0;
      for (; jj + kN <= n; jj += kN) {
        const bf m = bf::load_unaligned(mrow + jj);
        (bf::load_aligned(s + jj) + xsimd::select(m >= lowest, xsimd::max(m * log2e, lowest), m)).store_aligned(s + jj);
      }
      for (; jj < n; ++jj) s[jj] += mrow[jj] >= kLowest ? std::max(mrow[jj] * kLog2e, kLowest) : mrow[jj];
    } else if (rc.mask->kind == MaskKind::boolean) {
      const uint8_t* mrow = static_cast<const uint8_t*>(rc.mask->data) + rc.mask_row + j0;
      for (int jj = 0; jj < n; ++jj)
        if (!mrow[jj]) s[jj] = kNegInf;
    }
    // Keys past the causal limit or past the end of the tile.
    const int visible = rc.causal ? std::min(n, std::max(0, rc.position - j0 + 1)) : n;
    for (int jj = visible; jj < np; ++jj) s[jj] = kNegInf;

    bf vmax(kNegInf);
    for (int jj = 0; jj < np; jj += kN) vmax = xsimd::max(vmax, bf::load_aligned(s + jj));
    alignas(64) float lanes[kN];
    vmax.store_aligned(lanes);
    float tile_max = kNegInf;
    for (int t = 0; t < kN; ++t) tile_max = std::max(tile_max, lanes[t]);

    const float m_new = std::max(m, tile_max);
    const bf shift(m_new == kNegInf ? 0.f : m_new);  // nothing visible yet: every p is 2^-inf = 0
    const exp2_nonpositive<Arch> exp2;
    bf sum(0.f);
    float* pr = pb + r * kN;
    for (int jj = 0; jj < np; jj += kN) {
      const bf p = exp2(bf::load_aligned(s + jj) - shift);
      broadcast_lanes<Arch>(p, pr + static_cast<std::size_t>(jj) * kMR * kN, std::make_integer_sequence<unsigned, kN>{});
      sum += p;
    }
    if (m_new == kNegInf) return 1.f;
    const float alpha = m == kNegInf ? 0.f : std::exp2(m - m_new);
    l = l * alpha + xsimd::hadd(sum);
    m = m_new;
    return alpha;
  }
};

// max |x| over one row of n floats, folded into m; `finite` turns false on a NaN or an infinity.
template <class Arch>
struct max_abs_row {
  float operator()(Arch, const float* x, int n, float m, bool& finite) const {
    const bf big(std::numeric_limits<float>::max());
    bf m0(0.f), m1(0.f);
    auto ok = m0 == m0;  // all true
    int i = 0;
    for (; i + 2 * kN <= n; i += 2 * kN) {
      const bf a = xsimd::abs(bf::load_unaligned(x + i)), b = xsimd::abs(bf::load_unaligned(x + i + kN));
      ok = ok & (a <= big) & (b <= big);  // false for NaN and inf
      m0 = xsimd::max(m0, a);
      m1 = xsimd::max(m1, b);
    }
    for (; i + kN <= n; i += kN) {
      const bf a = xsimd::abs(bf::load_unaligned(x + i));
      ok = ok & (a <= big);
      m0 = xsimd::max(m0, a);
    }
    alignas(64) float lanes[kN];
    xsimd::max(m0, m1).store_aligned(lanes);
    for (int t = 0; t < kN; ++t) m = std::max(m, lanes[t]);
    for (; i < n; ++i) {
      const float a = std::fabs(x[i]);
      finite &= a <= std::numeric_limits<float>::max();
      m = std::max(m, a);
    }
    finite &= xsimd::all(ok);
    return m;
  }
};

}  // namespace

float max_abs(const Heads<const float>& x, int batch, int heads, int length, int n) {
  float m = 0;
  bool finite = true;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < length; ++i) m = max_abs_row<simd_arch>{}(simd_arch{}, x.row(b, h, i), n, m, finite);
  return finite ? m : std::numeric_limits<float>::infinity();
}

}  // namespace attnkit::simd

namespace attnkit::simd {
namespace {
// Floats of one thread's scratch: packed keys, scores, broadcast probabilities, broadcast
// queries, partial outputs; a multiple of 16 floats, so that every thread's part starts 64-byte
// aligned.
std::size_t thread_scratch_floats(const AttentionShape& s, bool weights) {
  const std::size_t keys = static_cast<std::size_t>(round_up(std::max(s.kv_len, 1), kNR));
  const std::size_t tile = weights ? keys : kTile, mr = kMR, n = kN, blocks = kBlocks;
  const std::size_t f = keys * s.head_dim + mr * tile + tile * mr * n + blocks * s.head_dim * mr * n + blocks * mr * s.v_dim;
  return (f + 15) / 16 * 16;
}
}  // namespace
}  // namespace attnkit::simd

namespace attnkit {
std::size_t attention_scratch_floats(const AttentionShape& s, bool weights, int threads) {
  // 16 floats of slack: the start is rounded up to 64 bytes for aligned loads.
  return simd::thread_scratch_floats(s, weights) * static_cast<std::size_t>(std::max(threads, 1)) + 16;
}
}  // namespace attnkit

namespace attnkit::simd {

namespace {

// One thread's working memory (see thread_scratch_floats).
struct Scratch {
  float* packed;  // [keys / kNR][d][kNR]
  float* S;       // [kMR][tile]
  float* P;       // [tile][kMR] broadcast vectors
  float* Q;       // [kBlocks][d][kMR] broadcast vectors
  float* O;       // [kBlocks][kMR][dv]

  Scratch(float* base, int keys, int d, int tile) {
    packed = base;
    S = packed + static_cast<std::size_t>(keys) * d;
    P = S + static_cast<std::size_t>(kMR) * tile;
    Q = P + static_cast<std::size_t>(tile) * kMR * kN;
    O = Q + static_cast<std::size_t>(kBlocks) * d * kMR * kN;
  }
};

// Packs the keys of (batch b, kv head g): panel jp holds keys jp*kNR .. +kNR, one row of kNR per
// head-dim index; keys past kv_len are zero.
void pack_keys(const AttentionArgs& a, int b, int g, int keys, float* packed) {
  const int d = a.shape.head_dim, lk = a.shape.kv_len;
  for (int j = 0; j < keys; ++j) {
    float* dst = packed + static_cast<std::size_t>(j / kNR) * d * kNR + (j % kNR);
    if (j < lk) {
      const float* k = a.k.row(b, g, j);
      for (int c = 0; c < d; ++c) dst[c * kNR] = k[c];
    } else {
      for (int c = 0; c < d; ++c) dst[c * kNR] = 0.f;
    }
  }
}

// How one call is cut: the query rows of a head go in super-blocks of `blocks` blocks of kMR.
struct Plan {
  int keys, tile, blocks, group, offset, super_rows, supers;
};

Plan plan(const AttentionArgs& a) {
  const AttentionShape& s = a.shape;
  Plan p;
  p.keys = round_up(std::max(s.kv_len, 1), kNR);
  p.tile = a.weights ? p.keys : kTile;
  p.group = s.heads / s.kv_heads;
  p.offset = s.kv_len - s.q_len;
  // Sharing tiles between blocks pays once one head's K and V outgrow L2 (measured: at 2 MB
  // 22 % faster; at 256 KB, where they stay in L2, 25 % slower from the larger L1 footprint).
  const double kv_bytes = static_cast<double>(s.kv_len) * (s.head_dim + s.v_dim) * sizeof(float);
  p.blocks = a.weights || kv_bytes < 768.0 * 1024 ? 1 : kBlocks;
  p.super_rows = kMR * p.blocks;
  p.supers = (s.q_len + p.super_rows - 1) / p.super_rows;
  return p;
}

// The output rows i00 .. i00 + super_rows of (batch b, head h), the keys packed in t.packed.
void super_block(const AttentionArgs& a, const Plan& p, int b, int h, int i00, const Scratch& t) {
  using Arch = simd_arch;
  const AttentionShape& s = a.shape;
  const int d = s.head_dim, dv = s.v_dim, lk = s.kv_len, tile = p.tile;
  const float qscale = a.scale * 1.44269504088896341f;  // scores in log2 units
  const float* vbase = a.v.row(b, h / p.group, 0);
  RowContext rc{a.alibi ? a.alibi[h] : 0.f, a.softcap * 1.44269504088896341f, 0, a.causal, &a.mask, 0};
  // A super-block of `blocks` query blocks shares each key/value tile while it is in cache:
  // per query block the whole K and V stream by, which for long rows comes from L3 (at
  // L = 4096, 3 % faster causal and 6 % bidirectional with 512-key tiles).
  int rows[kBlocks], jend[kBlocks];
  float m[kBlocks][kMR], l[kBlocks][kMR];
  int nb = 0, jmax = 0;
  for (; nb < p.blocks && i00 + nb * kMR < s.q_len; ++nb) {
    const int i0 = i00 + nb * kMR;
    rows[nb] = std::min(kMR, s.q_len - i0);
    float* Qb = t.Q + static_cast<std::size_t>(nb) * d * kMR * kN;
    for (int r = 0; r < kMR; ++r) {
      const float* q = a.q.row(b, h, i0 + std::min(r, rows[nb] - 1));
      for (int c = 0; c < d; ++c) bf(q[c] * qscale).store_aligned(Qb + (c * kMR + r) * kN);
      m[nb][r] = kNegInf;
      l[nb][r] = 0.f;
    }
    std::fill(t.O + static_cast<std::size_t>(nb) * kMR * dv, t.O + static_cast<std::size_t>(nb + 1) * kMR * dv, 0.f);
    // Keys any row of the block may see: the causal limit of its last row.
    jend[nb] = a.causal ? std::min(lk, std::max(0, p.offset + i0 + rows[nb])) : lk;
    jmax = std::max(jmax, jend[nb]);
  }
  for (int j0 = 0; j0 < jmax; j0 += tile) {
    for (int bi = 0; bi < nb; ++bi) {
      if (j0 >= jend[bi]) continue;  // causal: this block's keys ended before the tile
      const int i0 = i00 + bi * kMR;
      const int n = std::min(tile, jend[bi] - j0), np = round_up(n, kNR);
      float* Ob = t.O + static_cast<std::size_t>(bi) * kMR * dv;
      qk_tile<Arch>{}(Arch{}, t.Q + static_cast<std::size_t>(bi) * d * kMR * kN,
                      t.packed + static_cast<std::size_t>(j0) * d, d, np, t.S, tile);
      for (int r = 0; r < kMR; ++r) {
        rc.position = p.offset + i0 + r;
        rc.mask_row = a.mask.kind == MaskKind::none ? 0 : a.mask.row_offset(b, h, i0 + std::min(r, rows[bi] - 1));
        const float alpha = softmax_tile_row<Arch>{}(Arch{}, t.S + r * tile, t.P, r, j0, n, np, rc, m[bi][r], l[bi][r]);
        if (alpha != 1.f) {
          float* o = Ob + static_cast<std::size_t>(r) * dv;
          for (int c = 0; c < dv; ++c) o[c] *= alpha;
        }
      }
      pv_tile<Arch>{}(Arch{}, t.P, vbase + j0 * a.v.row_stride, a.v.row_stride, n, Ob, dv);
    }
  }
  for (int bi = 0; bi < nb; ++bi) {
    const int i0 = i00 + bi * kMR;
    for (int r = 0; r < rows[bi]; ++r) {
      float* out = a.out.row(b, h, i0 + r);
      const float inv = l[bi][r] > 0.f ? 1.f / l[bi][r] : 0.f;
      const float* o = t.O + (static_cast<std::size_t>(bi) * kMR + r) * dv;
      for (int c = 0; c < dv; ++c) out[c] = o[c] * inv;
      if (a.weights) {  // blocks == 1 and a single tile: P still holds this block's p
        float* w = a.weights + ((static_cast<std::size_t>(b) * s.heads + h) * s.q_len + i0 + r) * lk;
        const float* pr = t.P + r * kN;  // lane 0 of p[j][r]
        for (int j = 0; j < jend[bi]; ++j) w[j] = pr[static_cast<std::size_t>(j) * kMR * kN] * inv;
        for (int j = jend[bi]; j < lk; ++j) w[j] = 0.f;
      }
    }
  }
}

// Multiply-adds of one super-block (both products), for deciding how to split the work.
double super_block_work(const AttentionArgs& a, const Plan& p, int sb) {
  const AttentionShape& s = a.shape;
  const int last = std::min(s.q_len, (sb + 1) * p.super_rows);
  const double keys = a.causal ? std::clamp(p.offset + last, 0, s.kv_len) : s.kv_len;
  return static_cast<double>(p.super_rows) * keys * (s.head_dim + s.v_dim);
}

}  // namespace

// Threads take whole super-blocks, whose arithmetic does not depend on who runs them or on what
// else runs, so every thread count gives the same bits. Two ways to cut:
// - many (batch, kv head) pairs: a task per pair (it packs its keys once and runs its heads);
// - few pairs (long sequences, one batch): per pair the keys are packed once, then the
//   super-blocks of its heads are tasks, the heaviest (last, under a causal mask) first so that
//   the dynamic hand-out ends even.
void attention(const AttentionArgs& a, float* scratch) {
  const AttentionShape& s = a.shape;
  const Plan p = plan(a);
  const int threads = thread_count();
  float* base = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(scratch) + 63) & ~std::uintptr_t(63));
  const std::size_t per_thread = thread_scratch_floats(s, a.weights != nullptr);
  auto scratch_of = [&](int thread) { return Scratch(base + per_thread * thread, p.keys, s.head_dim, p.tile); };

  const int pairs = s.batch * s.kv_heads;
  double pair_work = 0;
  for (int sb = 0; sb < p.supers; ++sb) pair_work += super_block_work(a, p, sb);
  pair_work *= p.group;
  // Below ~2^20 multiply-adds a task costs about what waking a thread does (measured in
  // bench/threads.mjs: no slowdown at L = 128).
  constexpr double kGrain = 1 << 20;
  const int whole_pairs = task_count(pair_work * pairs, kGrain, pairs);
  if (threads == 1 || pairs >= 2 * threads) {
    parallel_for(whole_pairs > 1 ? pairs : 1, [&](int task, int thread) {
      const Scratch t = scratch_of(thread);
      for (int pair = whole_pairs > 1 ? task : 0; pair < (whole_pairs > 1 ? task + 1 : pairs); ++pair) {
        const int b = pair / s.kv_heads, g = pair % s.kv_heads;
        pack_keys(a, b, g, p.keys, t.packed);
        for (int h = g * p.group; h < (g + 1) * p.group; ++h)
          for (int sb = 0; sb < p.supers; ++sb) super_block(a, p, b, h, sb * p.super_rows, t);
      }
    });
    return;
  }
  const int units = p.group * p.supers;
  const bool split = task_count(pair_work, kGrain, units) > 1;
  for (int pair = 0; pair < pairs; ++pair) {
    const int b = pair / s.kv_heads, g = pair % s.kv_heads;
    const Scratch first = scratch_of(0);
    pack_keys(a, b, g, p.keys, first.packed);
    parallel_for(split ? units : 1, [&](int task, int thread) {
      Scratch t = scratch_of(thread);
      t.packed = first.packed;  // shared, read-only here
      for (int u = split ? task : 0; u < (split ? task + 1 : units); ++u) {
        // Heaviest first: the last super-block of every head, then the one before, ...
        const int sb = p.supers - 1 - u / p.group, h = g * p.group + u % p.group;
        super_block(a, p, b, h, sb * p.super_rows, t);
      }
    });
  }
}

}  // namespace attnkit::simd
