#include <algorithm>
#include <array>

#include "imagery/compute_backend.h"
#include "imagery/fused_pass.h"
#include "imagery/morphology.h"
#include "imagery/parallel_slices.h"
#include "imagery/smoothing.h"

namespace warmpool::imagery {
namespace {

class CpuBackend final : public ComputeBackend {
 public:
  explicit CpuBackend(int threads) : threads_(std::max(1, threads)) {}

  std::string Name() const override { return "cpu"; }

  void Begin(const FusedParams& params, int width, int height, uint16_t* scores) override {
    params_ = params;
    width_ = width;
    height_ = height;
    scores_ = scores;
    histograms_.assign(static_cast<size_t>(threads_), std::vector<uint64_t>(kScoreBins, 0));
  }

  void FusedStrip(int row0, int rows, const uint16_t* before, const uint16_t* after) override {
    const size_t plane = static_cast<size_t>(rows) * width_;
    const size_t offset = static_cast<size_t>(row0) * width_;
    uint16_t* out = scores_ + offset;
    const int threads = plane < 65536 ? 1 : threads_;
    if (threads == 1) {
      FusedPassCpu(params_, before, after, plane, 0, plane, offset, out, histograms_[0].data());
      return;
    }
    ParallelSlices(threads, plane, [&](int t, size_t begin, size_t end) {
      FusedPassCpu(params_, before, after, plane, begin, end, offset, out, histograms_[t].data());
    });
  }

  void Histogram(uint64_t* histogram) override {
    std::fill_n(histogram, kScoreBins, 0);
    for (const std::vector<uint64_t>& h : histograms_) {
      for (int k = 0; k < kScoreBins; ++k) {
        histogram[k] += h[k];
      }
    }
  }

  void Smooth(uint64_t* histogram) override {
    SmoothScoresCpu(scores_, width_, height_, params_.smooth_radius, params_.histogram_stride,
                    threads_, histogram, smooth_work_);
  }

  std::optional<std::vector<Region>> MaskAndFilter(const MaskParams& m, uint8_t* mask) override {
    const size_t count = static_cast<size_t>(width_) * height_;
    ThresholdScores(scores_, count, m.threshold_bin, mask);
    OpenClose(mask, width_, height_, m.open_radius, m.close_radius, threads_, morph_work_);
    ClearNodata(scores_, count, mask);
    return FilterComponents(mask, width_, height_, m.min_area_px);
  }

 private:
  const int threads_;
  FusedParams params_;
  int width_ = 0;
  int height_ = 0;
  uint16_t* scores_ = nullptr;
  std::vector<std::vector<uint64_t>> histograms_;  // one per thread
  std::vector<uint8_t> morph_work_;                // reused morphology scratch
  std::vector<uint16_t> smooth_work_;              // reused smoothing scratch
};

}  // namespace

ComputeBackendPtr MakeCpuBackend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace warmpool::imagery
