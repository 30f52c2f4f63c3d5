#pragma once

// Binary mask operations on 0/1 byte masks (row-major, width x height). Square structuring
// element of side 2r+1; pixels outside the image are ignored (the border neither erodes nor
// dilates), as OpenCV's default border for morphology. The CUDA kernels implement the same
// definition and must give identical masks.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace warmpool::imagery {

// mask[i] = 1 when packed score i is a valid change above `threshold_bin`, else 0.
void ThresholdScores(const uint16_t* scores, size_t count, uint32_t threshold_bin, uint8_t* mask);

// out = erosion (is_dilate false) or dilation (true) of `in` with radius r >= 0 (vertical pass
// into `out`, then the horizontal pass in place row by row). REQUIRES: in != out. Uses up to
// `threads` threads (rows split evenly).
void MorphologyPass(const uint8_t* in, uint8_t* out, int width, int height, int radius,
                    bool is_dilate, int threads);

// In place: opening (erode, dilate) with `open_radius`, then closing (dilate, erode) with
// `close_radius`; a radius of 0 skips that step. `work` is scratch space, grown to width*height
// bytes and meant to be reused across calls (fresh pages cost more than the passes on a VM).
void OpenClose(uint8_t* mask, int width, int height, int open_radius, int close_radius, int threads,
               std::vector<uint8_t>& work);

// Clears mask pixels whose score is kInvalidScore (nodata never counts as change).
void ClearNodata(const uint16_t* scores, size_t count, uint8_t* mask);

}  // namespace warmpool::imagery
