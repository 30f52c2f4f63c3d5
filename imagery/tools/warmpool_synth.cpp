// warmpool-synth: writes a synthetic before/after GeoTIFF pair with its exact ground-truth mask
// and prints the paths plus the imagery.change_detection kwargs to send, as JSON.
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "imagery/imagery_error.h"
#include "imagery/testing/synthetic_pair.h"

int main(int argc, char** argv) {
  using warmpool::imagery::SynthOptions;
  SynthOptions o;
  std::string out_dir = ".";
  std::string prefix = "synth";
  bool no_compress = false;
  bool no_radiometric = false;
  CLI::App app{"warmpool-synth: synthetic change-detection pair with exact ground truth"};
  app.add_option("--out-dir", out_dir, "output folder (created)");
  app.add_option("--prefix", prefix, "file prefix: <prefix>_before.tif, _after.tif, _truth.tif");
  app.add_option("--width", o.width, "pixels")->check(CLI::Range(16, 65536));
  app.add_option("--height", o.height, "pixels")->check(CLI::Range(16, 65536));
  app.add_option("--bands", o.band_count, "bands (4 = BGRN)")->check(CLI::Range(1, 8));
  app.add_option("--seed", o.seed, "random seed")->check(warmpool::Uint64Text());
  app.add_option("--objects", o.object_count, "inserted changes")->check(CLI::Range(0, 100000));
  app.add_option("--max-object", o.max_object_side, "largest object side, px")
      ->check(CLI::Range(6, 4096));
  app.add_option("--noise", o.noise_fraction, "noise sigma as a fraction of the signal")
      ->check(warmpool::FiniteRange(0.0, 1.0));
  app.add_option("--misregister", o.misregistration_px, "shift of `after` in x and y, px")
      ->check(CLI::Range(0, 16));
  app.add_option("--nodata-border", o.nodata_border_px, "nodata columns on the left of before")
      ->check(CLI::Range(0, 65536));
  app.add_flag("--identical", o.identical, "after = before exactly");
  app.add_flag("--no-radiometric", no_radiometric, "no gain/offset between dates");
  app.add_flag("--uncompressed", no_compress, "write uncompressed GeoTIFFs");
  warmpool::AddVersionFlag(app, "warmpool-synth");
  WARMPOOL_CLI_PARSE(app, argc, argv);
  o.radiometric_change = !no_radiometric;
  try {
    const auto pair = warmpool::imagery::GenerateSyntheticPair(o);
    nlohmann::json paths =
        warmpool::imagery::WriteSyntheticPair(pair, out_dir, prefix, !no_compress);
    nlohmann::json out = {
        {"files", paths},
        {"objects_inserted", pair.objects_inserted},
        {"objects_in_truth", pair.objects_in_truth},
        {"task", "imagery.change_detection"},
        {"kwargs", {{"before", paths["before"]}, {"after", paths["after"]}, {"method", "cva"}}}};
    std::cout << out.dump(2) << std::endl;
  } catch (const warmpool::imagery::ImageryError& e) {
    std::cerr << "warmpool-synth: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
