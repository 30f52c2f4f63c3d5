#pragma once

// Buffers that the CPU fused pass streams through together: the before and after strips and the
// packed scores. Each one is 64-byte aligned, so no vector load straddles two cache lines, and
// starts in its own quarter ("lane") of a 4 KiB page. Plain std::vectors this large all start 16
// bytes into a page, so pixel i of every stream falls in the same L1 set and the streams (plus the
// 16 KiB histogram) fight over its 12 ways. Measured: on plain std::vectors the 4096^2 pass takes
// 1.10-1.19x as long (fused_pass_ab --variant-layout std-vector, docs/benchmarks/imagery.md).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

namespace warmpool::imagery {

// The quarter of a 4 KiB page a buffer starts in, by its role in the pass.
enum class PageLane : uint8_t { kBefore = 0, kAfter = 1, kScores = 2, kOther = 3 };

inline constexpr size_t kPageBytes = 4096;
inline constexpr size_t kLaneBytes = kPageBytes / 4;  // a multiple of the 64-byte line

template <typename T>
class LaneAllocator {
 public:
  using value_type = T;
  // Moves and swaps carry the buffer with its lane; a copy assignment keeps the destination's
  // lane (its role) and copies the elements.
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using propagate_on_container_copy_assignment = std::false_type;
  using is_always_equal = std::false_type;

  LaneAllocator() noexcept = default;
  explicit LaneAllocator(PageLane lane) noexcept : lane_(lane) {}
  template <typename U>
  LaneAllocator(const LaneAllocator<U>& other) noexcept : lane_(other.lane()) {}  // NOLINT

  T* allocate(size_t n) {
    if (n > (std::numeric_limits<size_t>::max() - kPageBytes) / sizeof(T)) {
      throw std::bad_array_new_length();
    }
    void* page = ::operator new (n * sizeof(T) + offset(), std::align_val_t{kPageBytes});
    return reinterpret_cast<T*>(static_cast<std::byte*>(page) + offset());
  }

  void deallocate(T* p, size_t) noexcept {
    ::operator delete (reinterpret_cast<std::byte*>(p) - offset(), std::align_val_t{kPageBytes});
  }

  PageLane lane() const noexcept { return lane_; }

  friend bool operator==(const LaneAllocator& a, const LaneAllocator& b) noexcept {
    return a.lane_ == b.lane_;
  }

 private:
  size_t offset() const noexcept { return static_cast<size_t>(lane_) * kLaneBytes; }

  PageLane lane_ = PageLane::kOther;
};

template <typename T>
using LaneVector = std::vector<T, LaneAllocator<T>>;

// The length of each of `parts` contiguous slices of n pixels, rounded up to 32 (a 64-byte line of
// a uint16 plane), so that threads splitting a buffer each start as aligned as the buffer.
inline size_t LineAlignedSlice(size_t n, int parts) {
  return ((n + parts - 1) / parts + 31) & ~size_t{31};
}

// n value-initialised elements in `lane`.
template <typename T>
LaneVector<T> MakeLaneVector(size_t n, PageLane lane) {
  return LaneVector<T>(n, LaneAllocator<T>(lane));
}

}  // namespace warmpool::imagery
