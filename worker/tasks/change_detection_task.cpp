#include "worker/tasks/change_detection_task.h"

#include <array>
#include <filesystem>
#include <map>

#include "common/logging.h"
#include "imagery/change_job.h"
#include "imagery/cuda/gpu_backend.h"

namespace warmpool::imagery {
namespace {

using Json = nlohmann::json;

constexpr std::array<const char*, 10> kPositional = {
    "before",    "after",     "output_dir",  "method",      "bands",
    "normalize", "threshold", "open_radius", "min_area_px", "quicklook"};
constexpr std::array<const char*, 7> kKeywordOnly = {
    "close_radius",         "red_band",    "nir_band", "magnitude", "smooth_radius",
    "irmad_max_iterations", "median_floor"};

[[noreturn]] void TypeFail(const std::string& msg) {
  throw TaskArgumentError(TaskArgumentError::Type::kTypeError, msg);
}
[[noreturn]] void ValueFail(const std::string& msg) {
  throw TaskArgumentError(TaskArgumentError::Type::kValueError, msg);
}

std::string TypeName(const Json& v) { return v.type_name(); }

// Binds positional and keyword arguments to parameter names, as Python would.
std::map<std::string, Json> BindArguments(const Json& args, const Json& kwargs) {
  if (!args.is_null() && !args.is_array()) {
    TypeFail("args must be a list, got " + TypeName(args));
  }
  if (!kwargs.is_null() && !kwargs.is_object()) {
    TypeFail("kwargs must be a dict, got " + TypeName(kwargs));
  }
  std::map<std::string, Json> bound;
  const size_t n_args = args.is_array() ? args.size() : 0;
  if (n_args > kPositional.size()) {
    TypeFail("change_detection() takes at most " + std::to_string(kPositional.size()) +
             " positional arguments but " + std::to_string(n_args) + " were given");
  }
  for (size_t i = 0; i < n_args; ++i) {
    bound[kPositional[i]] = args[i];
  }
  if (kwargs.is_object()) {
    for (const auto& [key, value] : kwargs.items()) {
      const bool known =
          std::find_if(kPositional.begin(), kPositional.end(),
                       [&](const char* k) { return key == k; }) != kPositional.end() ||
          std::find_if(kKeywordOnly.begin(), kKeywordOnly.end(),
                       [&](const char* k) { return key == k; }) != kKeywordOnly.end();
      if (!known) {
        TypeFail("change_detection() got an unexpected keyword argument '" + key + "'");
      }
      if (bound.count(key)) {
        TypeFail("change_detection() got multiple values for argument '" + key + "'");
      }
      bound[key] = value;
    }
  }
  for (const char* required : {"before", "after"}) {
    if (!bound.count(required)) {
      TypeFail(std::string("change_detection() missing required argument: '") + required + "'");
    }
  }
  return bound;
}

const Json* Get(const std::map<std::string, Json>& bound, const char* name) {
  const auto it = bound.find(name);
  return (it == bound.end() || it->second.is_null()) ? nullptr : &it->second;
}

std::string GetString(const std::map<std::string, Json>& b, const char* name,
                      const std::string& fallback) {
  const Json* v = Get(b, name);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_string()) {
    TypeFail(std::string(name) + " must be a string, got " + TypeName(*v));
  }
  return v->get<std::string>();
}

int64_t GetInt(const std::map<std::string, Json>& b, const char* name, int64_t fallback,
               int64_t min_value, int64_t max_value) {
  const Json* v = Get(b, name);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_number_integer()) {
    TypeFail(std::string(name) + " must be an int, got " + TypeName(*v));
  }
  const int64_t x = v->get<int64_t>();
  if (x < min_value || x > max_value) {
    ValueFail(std::string(name) + " must be in " + std::to_string(min_value) + ".." +
              std::to_string(max_value) + ", got " + std::to_string(x));
  }
  return x;
}

double GetNumber(const std::map<std::string, Json>& b, const char* name, double fallback,
                 double min_value, double max_value) {
  const Json* v = Get(b, name);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_number() || v->is_boolean()) {
    TypeFail(std::string(name) + " must be a number, got " + TypeName(*v));
  }
  const double x = v->get<double>();
  if (!(x >= min_value && x <= max_value)) {
    ValueFail(std::string(name) + " must be in " + std::to_string(min_value) + ".." +
              std::to_string(max_value) + ", got " + v->dump());
  }
  return x;
}

bool GetBool(const std::map<std::string, Json>& b, const char* name, bool fallback) {
  const Json* v = Get(b, name);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_boolean()) {
    TypeFail(std::string(name) + " must be a bool, got " + TypeName(*v));
  }
  return v->get<bool>();
}

Method ParseNamedMethod(const std::string& s) {
  if (s == "cva") return Method::kCva;
  if (s == "irmad" || s == "ir-mad" || s == "mad") return Method::kIrMad;
  if (s == "absdiff" || s == "abs_diff" || s == "diff") return Method::kAbsDiff;
  if (s == "logratio" || s == "log_ratio") return Method::kLogRatio;
  if (s == "ndvi" || s == "ndvi_diff") return Method::kNdvi;
  ValueFail("method must be one of 'auto', 'irmad', 'cva', 'absdiff', 'logratio', 'ndvi', got '" +
            s + "'");
}

// Sets o.method; false for "auto" (chosen from the data once the band count is known).
bool ParseMethod(const std::string& s, ChangeOptions& o) {
  if (s == "auto") return false;
  o.method = ParseNamedMethod(s);
  return true;
}

Normalization ParseNormalization(const Json* v) {
  if (v == nullptr || (v->is_boolean() && !v->get<bool>())) {
    return Normalization::kNone;
  }
  if (!v->is_string()) {
    TypeFail("normalize must be a string or None, got " + TypeName(*v));
  }
  const std::string s = v->get<std::string>();
  if (s == "pif") return Normalization::kPif;
  if (s == "histogram" || s == "hist") return Normalization::kHistogram;
  if (s == "none") return Normalization::kNone;
  if (s == "standardize" || s == "standardise" || s == "zscore") return Normalization::kStandardize;
  ValueFail("normalize must be one of 'standardize', 'pif', 'histogram', 'none', got '" + s + "'");
}

void ParseThreshold(const Json* v, ChangeOptions& o) {
  if (v == nullptr) {
    o.threshold = ThresholdMethod::kOtsu;
    return;
  }
  if (v->is_number() && !v->is_boolean()) {
    const double x = v->get<double>();
    if (!(x >= 0) || !std::isfinite(x)) {
      ValueFail("a fixed threshold must be a finite number >= 0, got " + v->dump());
    }
    o.threshold = ThresholdMethod::kFixed;
    o.fixed_threshold = x;
    return;
  }
  if (!v->is_string()) {
    TypeFail("threshold must be 'em', 'otsu', 'ki' or a number, got " + TypeName(*v));
  }
  const std::string s = v->get<std::string>();
  if (s == "otsu") {
    o.threshold = ThresholdMethod::kOtsu;
  } else if (s == "ki" || s == "kittler" || s == "kittler-illingworth") {
    o.threshold = ThresholdMethod::kKittlerIllingworth;
  } else if (s == "em") {
    o.threshold = ThresholdMethod::kEm;
  } else {
    ValueFail("threshold must be 'em', 'otsu', 'ki' or a number, got '" + s + "'");
  }
}

std::vector<int> ParseBands(const Json* v) {
  if (v == nullptr) {
    return {};
  }
  if (!v->is_array()) {
    TypeFail("bands must be a list of ints or None, got " + TypeName(*v));
  }
  std::vector<int> bands;
  for (const Json& b : *v) {
    if (!b.is_number_integer()) {
      TypeFail("bands must be a list of ints, found " + TypeName(b));
    }
    const int64_t x = b.get<int64_t>();
    if (x < 1 || x > 65535) {
      ValueFail("bands are 1-based band numbers, got " + std::to_string(x));
    }
    bands.push_back(static_cast<int>(x));
  }
  if (bands.empty() || bands.size() > static_cast<size_t>(kMaxBands)) {
    ValueFail("bands must list 1.." + std::to_string(kMaxBands) + " bands");
  }
  return bands;
}

// Where the products go, and the roots that directory must be inside (data_root.h).
void ChooseOutputDir(const std::string& requested, const std::string& before,
                     const std::string& after, const std::string& method, const ImageryConfig& cfg,
                     ChangeJob& job) {
  namespace fs = std::filesystem;
  if (requested.rfind("/vsi", 0) == 0) {
    ValueFail("output_dir must be a local directory, got '" + requested + "'");
  }
  for (const std::string& root : {cfg.data_root, cfg.output_root}) {
    if (!root.empty()) {
      job.output_roots.push_back(root);
    }
  }
  if (!requested.empty()) {
    job.output_dir = requested;
    return;
  }
  std::string parent = cfg.output_root;
  if (parent.empty()) {
    parent = cfg.data_root.empty() ? fs::temp_directory_path().string()
                                   : (fs::path(cfg.data_root) / "changes").string();
  } else {
    std::error_code ec;
    fs::create_directories(parent, ec);  // the operator's own folder; OutputDir::Open reports
  }
  const std::string name =
      fs::path(before).stem().string() + "__" + fs::path(after).stem().string() + "_" + method;
  job.output_dir = (fs::path(parent) / name).string();
}

}  // namespace

void ValidateDeviceSpec(const std::string& device) {
  if (device == "auto" || device == "cpu" || device == "cuda") {
    return;
  }
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 &&
      device.find_first_not_of("0123456789", 5) == std::string::npos && device.size() < 9) {
    return;
  }
  throw ImageryError(ImageryError::Kind::kInvalidArgument,
                     "device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got '" + device + "'");
}

ComputeBackendPtr SelectBackend(const std::string& device, int threads) {
  ValidateDeviceSpec(device);
  if (device == "auto") {
    const int count = CudaDeviceCount();
    if (count > 0) {
      try {
        ComputeBackendPtr gpu = MakeCudaBackend(0);
        LogEvent(spdlog::level::info, "imagery_device", {{"device", gpu->Name()}, {"auto", true}});
        return gpu;
      } catch (const ImageryError& e) {
        LogEvent(spdlog::level::warn, "imagery_device_fallback",
                 {{"device", "cpu"}, {"reason", e.what()}});
      }
    }
    LogEvent(spdlog::level::info, "imagery_device",
             {{"device", "cpu"},
              {"auto", true},
              {"cuda_compiled_in", CudaCompiledIn()},
              {"cuda_devices", count}});
    return MakeCpuBackend(threads);
  }
  if (device == "cpu") {
    LogEvent(spdlog::level::info, "imagery_device", {{"device", "cpu"}, {"auto", false}});
    return MakeCpuBackend(threads);
  }
  const int ordinal = device == "cuda" ? 0 : std::stoi(device.substr(5));
  ComputeBackendPtr gpu = MakeCudaBackend(ordinal);
  LogEvent(spdlog::level::info, "imagery_device", {{"device", gpu->Name()}, {"auto", false}});
  return gpu;
}

Json RunChangeDetectionTask(const Json& args, const Json& kwargs, const ImageryConfig& cfg) {
  const std::map<std::string, Json> b = BindArguments(args, kwargs);
  ChangeJob job;
  const std::string before = GetString(b, "before", "");
  const std::string after = GetString(b, "after", "");
  ChangeOptions& o = job.options;
  // method absent or "auto": what the caller leaves open is chosen from the band count
  // (imagery/method_selection.h); a named method keeps the v1 defaults pif + otsu.
  job.auto_choices.enabled = !ParseMethod(GetString(b, "method", "auto"), o);
  job.auto_choices.normalization = !b.count("normalize");
  job.auto_choices.threshold = !b.count("threshold");
  job.auto_choices.smooth = !b.count("smooth_radius");
  job.auto_choices.floor = !b.count("median_floor");
  o.bands = ParseBands(Get(b, "bands"));
  // Absent: the default "pif"; an explicit None: no normalisation.
  o.normalization =
      b.count("normalize") ? ParseNormalization(Get(b, "normalize")) : Normalization::kPif;
  ParseThreshold(Get(b, "threshold"), o);
  o.smooth_radius = static_cast<int>(GetInt(b, "smooth_radius", 0, 0, 8));
  o.auto_floor_factor = GetNumber(b, "median_floor", 3.0, 0.0, 100.0);
  o.irmad.max_iterations = static_cast<int>(GetInt(b, "irmad_max_iterations", 50, 1, 1000));
  o.open_radius = static_cast<int>(GetInt(b, "open_radius", 0, 0, 16));
  o.close_radius = static_cast<int>(GetInt(b, "close_radius", 0, 0, 16));
  o.min_area_px = GetInt(b, "min_area_px", 16, 0, int64_t{1} << 40);
  o.red_band = static_cast<int>(GetInt(b, "red_band", 3, 1, 65535));
  o.nir_band = static_cast<int>(GetInt(b, "nir_band", 4, 1, 65535));
  o.threads = std::max(1, cfg.threads);
  o.strip_rows = std::max(1, cfg.strip_rows);
  job.whole_decode_max_mb = cfg.whole_decode_max_mb;
  job.quicklook = GetBool(b, "quicklook", true);
  job.write_magnitude = GetBool(b, "magnitude", false);

  if (before.empty() || after.empty()) {
    ValueFail("before and after must be raster paths, got an empty string");
  }
  job.before_path = before;
  job.after_path = after;
  job.inputs = PathPolicy{cfg.data_root, cfg.allow_remote_prefixes};
  ChooseOutputDir(GetString(b, "output_dir", ""), before, after,
                  job.auto_choices.enabled ? "auto" : MethodName(o.method), cfg, job);

  ComputeBackendPtr backend = SelectBackend(cfg.device, o.threads);
  return RunChangeJob(job, *backend);
}

}  // namespace warmpool::imagery
