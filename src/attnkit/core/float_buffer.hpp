// An array owned by a module (weights, scratch, caches), allocated with malloc. Allocation never
// aborts: in the wasm builds a failed `new` (even a nothrow one) aborts the instance and
// std::vector reports failure by throwing, so module storage is malloc'd, and a failed
// allocation comes back as false for the caller to turn into out_of_memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace attnkit {

template <class T>
class Buffer {
 public:
  // Exactly n elements, all `value`. False (and empty) when memory runs out.
  bool assign(std::size_t n, T value) {
    if (!allocate(n)) return false;
    std::fill_n(data_.get(), n, value);
    return true;
  }
  // At least n elements with unspecified contents (scratch); keeps the storage when it is big
  // enough. size() stays the allocated count.
  bool reserve(std::size_t n) { return (data_ && n <= capacity_) || allocate(n); }
  // n elements with unspecified contents; size() becomes n. Reuses the storage when it fits.
  bool resize(std::size_t n) {
    if (!reserve(n)) return false;
    size_ = n;
    return true;
  }

  T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  bool allocate(std::size_t n) {
    data_.reset();
    size_ = capacity_ = 0;
    if (n > SIZE_MAX / sizeof(T)) return false;
    data_.reset(static_cast<T*>(std::malloc(std::max<std::size_t>(n, 1) * sizeof(T))));
    if (!data_) return false;
    size_ = capacity_ = n;
    return true;
  }

  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

using FloatBuffer = Buffer<float>;

// A base for module classes: `new Module()` returns null when the heap is full instead of
// aborting (a class allocation function declared noexcept makes the new-expression check).
struct HeapObject {
  static void* operator new(std::size_t n) noexcept { return std::malloc(n); }
  static void operator delete(void* p) noexcept { std::free(p); }
};

}  // namespace attnkit
