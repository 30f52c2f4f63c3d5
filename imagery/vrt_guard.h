#pragma once

// A VRT is read only after its XML has been checked and its sources pinned: GDAL's VRT driver
// would otherwise open any file or connection string a source names (another VRT, "MEM:::",
// "/vsicurl/http://127.0.0.1/...", a FIFO, a file outside the data root), at open time, with any
// driver. See https://gdal.org/drivers/raster/vrt.html for the elements.

#include <functional>
#include <string>

namespace warmpool::imagery {

// Returns what GDAL must open instead of a source `filename` (as written in <SourceFilename>;
// `relative_to_vrt` from its relativeToVRT attribute). Throws ImageryError to refuse it.
using VrtSourcePinner =
    std::function<std::string(const std::string& filename, bool relative_to_vrt)>;

// Checks `xml` (a <VRTDataset>) and returns it with every <SourceFilename> replaced by what `pin`
// returns (relativeToVRT="0", shared="0"). Allowed: a plain VRTDataset (no subClass) whose bands
// are plain or VRTSourcedRasterBand with SimpleSource, ComplexSource, AveragedSource or
// KernelFilteredSource sources, overviews and masks; derived (pixel function), raw and warped
// VRTs, OpenOptions and unknown elements are refused. At most `max_sources` <SourceFilename>s.
// Throws ImageryError: kCorrupt for XML GDAL cannot parse, kPermission for a refused element
// (the message names it), or what `pin` throws.
std::string PinVrtSources(const std::string& xml, const VrtSourcePinner& pin,
                          int max_sources = 256);

}  // namespace warmpool::imagery
