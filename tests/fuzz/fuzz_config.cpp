// libFuzzer harness: config.json text -> model spec (any result but a coded error or a spec is a
// bug: an escaped exception or a sanitizer report).
#include <cstdint>
#include <string>

#include "attnkit/models/model_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string spec;
  (void)attnkit::model_spec_from_config(reinterpret_cast<const char*>(data), size, spec);
  return 0;
}
