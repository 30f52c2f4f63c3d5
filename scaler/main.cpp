// warmpool-scaler: KEDA external scaler for Celery on Redis. Thin shell over warmpool_scaler.
#include <csignal>

#include "scaler/scaler_options.h"
#include "scaler/scaler_server.h"

int main(int argc, char** argv) {
  warmpool::scaler::ScalerOptions options;
  int exit_code = 0;
  if (!warmpool::scaler::ParseScalerOptions(argc, argv, &options, &exit_code)) return exit_code;
  return warmpool::scaler::RunScalerServer(options);
}
