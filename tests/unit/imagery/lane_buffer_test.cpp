#include "imagery/lane_buffer.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <catch2/catch.hpp>

namespace warmpool::imagery {
namespace {

size_t PageOffset(const void* p) { return reinterpret_cast<uintptr_t>(p) % kPageBytes; }

TEST_CASE("Each lane starts 64-byte aligned in its own quarter of a page", "[imagery][lanes]") {
  for (const size_t n : {size_t{1}, size_t{1000}, size_t{3} << 20}) {
    const LaneVector<uint16_t> before = MakeLaneVector<uint16_t>(n, PageLane::kBefore);
    const LaneVector<uint16_t> after = MakeLaneVector<uint16_t>(n, PageLane::kAfter);
    const LaneVector<uint16_t> scores = MakeLaneVector<uint16_t>(n, PageLane::kScores);
    const LaneVector<double> other = MakeLaneVector<double>(n, PageLane::kOther);
    CHECK(PageOffset(before.data()) == 0);
    CHECK(PageOffset(after.data()) == 1024);
    CHECK(PageOffset(scores.data()) == 2048);
    CHECK(PageOffset(other.data()) == 3072);
    CHECK(before.size() == n);
    CHECK(std::all_of(after.begin(), after.end(), [](uint16_t v) { return v == 0; }));
  }
}

TEST_CASE("Lane vectors keep their lane through copies, growth and moves", "[imagery][lanes]") {
  LaneVector<uint16_t> after = MakeLaneVector<uint16_t>(100, PageLane::kAfter);
  for (size_t i = 0; i < after.size(); ++i) {
    after[i] = static_cast<uint16_t>(i);
  }
  const LaneVector<uint16_t> copy = after;  // copy construction keeps the lane
  CHECK(PageOffset(copy.data()) == 1024);
  CHECK(copy == after);

  LaneVector<uint16_t> before = MakeLaneVector<uint16_t>(10, PageLane::kBefore);
  before = after;  // copy assignment keeps the destination's lane, copies the elements
  CHECK(PageOffset(before.data()) == 0);
  CHECK(before == after);

  before.resize(1 << 20, 7);  // reallocation stays in the lane
  CHECK(PageOffset(before.data()) == 0);
  CHECK(before[99] == 99);
  CHECK(before.back() == 7);

  const uint16_t* buffer = after.data();
  LaneVector<uint16_t> moved = MakeLaneVector<uint16_t>(0, PageLane::kScores);
  moved = std::move(after);  // a move hands over the buffer, lane and all
  CHECK(moved.data() == buffer);
  CHECK(moved.get_allocator().lane() == PageLane::kAfter);
}

}  // namespace
}  // namespace warmpool::imagery
