#pragma once

#include <string_view>
#include <vector>

#include "common/split.h"

namespace warmpool::sim {

// Reads CSV text line by line: strips a trailing '\r', skips empty lines and, when asked, lines
// that start with '#'; counts lines from 1 (for error messages). None of the formats read here
// (the workload CSV, the public traces) quotes fields, so there is no quoting.
class CsvLines {
 public:
  enum class Comments { kKeep, kSkip };
  explicit CsvLines(std::string_view text, Comments comments = Comments::kKeep)
      : text_(text), skip_comments_(comments == Comments::kSkip) {}

  bool Next(std::string_view* line) {
    while (pos_ < text_.size()) {
      size_t nl = text_.find('\n', pos_);
      if (nl == std::string_view::npos) nl = text_.size();
      std::string_view l = text_.substr(pos_, nl - pos_);
      pos_ = nl + 1;
      ++line_no_;
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      if (l.empty() || (skip_comments_ && l.front() == '#')) continue;
      *line = l;
      return true;
    }
    return false;
  }
  int line_no() const { return line_no_; }

 private:
  std::string_view text_;
  bool skip_comments_;
  size_t pos_ = 0;
  int line_no_ = 0;
};

// The comma-separated fields of one line (an empty line is one empty field). kSpaces trims spaces
// and tabs around each field, for CSV written by hand.
enum class CsvTrim { kNone, kSpaces };
inline std::vector<std::string_view> SplitCsvFields(std::string_view line,
                                                    CsvTrim trim = CsvTrim::kNone) {
  std::vector<std::string_view> out = SplitOnComma(line);
  if (trim == CsvTrim::kSpaces) {
    for (std::string_view& f : out) f = TrimSpaces(f);
  }
  return out;
}

}  // namespace warmpool::sim
