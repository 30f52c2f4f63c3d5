// Compiles WARMPOOL_FUSED_VARIANT_SOURCE with the fused pass's public functions renamed (see
// fused_pass_variant.h). The flags match imagery/fused_pass.cpp's (CMakeLists.txt).
#define FusedPassCpu FusedPassCpuVariant
#define ScoreRangeCpu ScoreRangeCpuVariant
#define MeasureRangeCpu MeasureRangeCpuVariant
#include WARMPOOL_FUSED_VARIANT_SOURCE
