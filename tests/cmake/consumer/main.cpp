// Uses a kernel (sinusoidal positional encoding, its SIMD build) and a file format (a
// SentencePiece model read from argv[1]) through the installed or added attnkit; prints "ok".
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/ops/positional.hpp"
#include "attnkit/text/sentencepiece.hpp"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  attnkit::SinusoidalParams params;
  params.length = 4;
  params.dim = 8;
  std::vector<float> pe(attnkit::sinusoidal_size(params));
  if (!attnkit::sinusoidal_positional_encoding(pe.data(), params).ok()) return 3;
  if (std::fabs(pe[8 + 0] - std::sin(1.0f)) > 1e-6f) return 4;  // position 1, first sine
  std::ifstream in(argv[1], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::unique_ptr<attnkit::SentencePiece> sp;
  if (!attnkit::SentencePiece::from_model_proto(bytes.data(), bytes.size(), sp).ok()) return 5;
  std::vector<int32_t> out;
  const std::string text = "In the beginning";
  if (!sp->encode(text.data(), text.size(), out).ok() || out.empty()) return 6;
  std::printf("ok: %zu tokens\n", out.size() / 3);
  return 0;
}
