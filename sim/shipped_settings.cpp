#include "sim/shipped_settings.h"

namespace warmpool::sim::shipped {

std::map<std::string, std::string> TriggerMetadata() {
  return {{"countInFlight", "true"}, {"activationBacklog", "0"},  {"minWarmReplicas", "0"},
          {"keepAlive", "auto"},     {"coldStartSeconds", "300"}, {"nodeUnneededSeconds", "600"}};
}

}  // namespace warmpool::sim::shipped
