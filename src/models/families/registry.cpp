#include "family.hpp"

namespace attnkit {

// Each family's entry, defined in its file here.
extern const Family kBertFamily, kRobertaFamily, kXlmRobertaFamily, kDistilbertFamily, kModernbertFamily, kGpt2Family, kGptNeoxFamily, kBloomFamily, kLlamaFamily, kQwen2Family, kQwen3Family, kMistralFamily, kPhi3Family, kGemma2Family;

namespace {

const Family* const kFamilies[] = {&kBertFamily, &kRobertaFamily, &kXlmRobertaFamily, &kDistilbertFamily, &kModernbertFamily, &kGpt2Family, &kGptNeoxFamily, &kBloomFamily, &kLlamaFamily, &kQwen2Family, &kQwen3Family, &kMistralFamily, &kPhi3Family, &kGemma2Family};

}  // namespace

const Family* find_family(const std::string& model_type) {
  for (const Family* f : kFamilies)
    if (model_type == f->model_type) return f;
  return nullptr;
}

std::string supported_families() {
  std::string out;
  for (const Family* f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(f->model_type);
  return out;
}

}  // namespace attnkit
