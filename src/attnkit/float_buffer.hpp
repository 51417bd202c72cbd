// A float array owned by a module (weights, scratch, caches). Allocation never throws: wasm
// builds abort on std::bad_alloc, so a failed allocation is reported and turned into
// out_of_memory by the caller.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>

namespace attnkit {

class FloatBuffer {
 public:
  // Exactly n floats, all `value`. False (and empty) when memory runs out.
  bool assign(std::size_t n, float value) {
    if (!allocate(n)) return false;
    std::fill_n(data_.get(), n, value);
    return true;
  }
  // At least n floats with unspecified contents (scratch); keeps the storage when it is big enough.
  bool reserve(std::size_t n) { return (data_ && n <= size_) || allocate(n); }

  float* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  bool allocate(std::size_t n) {
    data_.reset(new (std::nothrow) float[n == 0 ? 1 : n]);
    size_ = data_ ? n : 0;
    return data_ != nullptr;
  }

  std::unique_ptr<float[]> data_;
  std::size_t size_ = 0;
};

}  // namespace attnkit
