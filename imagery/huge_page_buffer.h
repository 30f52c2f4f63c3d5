#pragma once

// A large uninitialised buffer backed by transparent huge pages where the kernel offers them
// (THP "madvise" or "always"), else by ordinary pages. A first touch of a 4 KiB page costs about
// 12 us on the VMs these numbers come from, so faulting in a 128 MiB image took 0.40 s; in 2 MiB
// pages the same took 0.012 s (docs/benchmarks/imagery.md, "Whole-pair decode").

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <sys/mman.h>

namespace warmpool::imagery {

template <typename T>
class HugePageBuffer {
 public:
  HugePageBuffer() = default;
  explicit HugePageBuffer(size_t count) : count_(count) {
    if (count == 0) {
      return;
    }
    const size_t bytes = (count * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, bytes);
    if (p == nullptr) {
      throw std::bad_alloc();
    }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the buffer still works
#endif
    data_.reset(static_cast<T*>(p));
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return count_; }

 private:
  static constexpr size_t kHugePage = size_t{2} << 20;
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t count_ = 0;
};

}  // namespace warmpool::imagery
