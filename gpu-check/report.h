#pragma once

// A flat, ordered record of named numbers and strings, written as one JSON object and as a
// two-column Markdown table (no JSON library: gpu-check builds without Debian packages).

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace warmpool::gpucheck {

class Report {
 public:
  using Value = std::variant<double, std::string, bool>;

  void Add(std::string key, Value value, std::string note = "") {
    rows_.push_back({std::move(key), std::move(value), std::move(note)});
  }
  std::string Json() const;
  std::string Markdown() const;

 private:
  struct Row {
    std::string key;
    Value value;
    std::string note;
  };
  std::vector<Row> rows_;
};

}  // namespace warmpool::gpucheck
