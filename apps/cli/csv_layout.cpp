// apps/cli/csv_layout.cpp — header detection and features-only CSV rows (see csv_layout.h).
#include "csv_layout.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <fstream>
#include <vector>

#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/data/csv_reader.h>

namespace ember::cli {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw IOError("CSV file " + path + ": " + problem);
}

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// The cells of one line, trimmed (a trailing comma makes a last, empty cell, as in data/).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = line.find(',', start);
    cells.push_back(trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

// Parsed the way data/csv_reader.cpp parses a feature (std::from_chars, the whole cell).
bool parse_number(const std::string& cell, double& value) {
  auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  return !cell.empty() && error == std::errc() && end == cell.data() + cell.size();
}

}  // namespace

CsvLayout inspect_csv(const std::string& path) {
  std::ifstream file(path);
  if (!file) fail(path, "cannot open it");
  std::string line;
  for (bool first = true; std::getline(file, line); first = false) {
    if (first) data::strip_utf8_bom(line);
    if (trim(line).empty()) continue;
    std::vector<std::string> cells = cells_of(line);
    CsvLayout layout;
    layout.columns = static_cast<std::int64_t>(cells.size());
    double ignored = 0;
    for (const std::string& cell : cells) {
      if (!parse_number(cell, ignored)) layout.first_line_is_header = true;
    }
    return layout;
  }
  fail(path, "contains no data rows");
}

Tensor read_csv_features(const std::string& path, bool has_header) {
  std::ifstream file(path);
  if (!file) fail(path, "cannot open it");
  std::vector<float> values;
  std::size_t columns = 0, rows = 0;
  bool header_pending = has_header;
  std::string line;
  for (int line_number = 1; std::getline(file, line); ++line_number) {
    if (line_number == 1) data::strip_utf8_bom(line);
    if (trim(line).empty()) continue;
    std::vector<std::string> cells = cells_of(line);
    if (columns == 0) columns = cells.size();
    if (cells.size() != columns) {
      fail(path, "line " + std::to_string(line_number) + " has " + std::to_string(cells.size()) + " columns, expected " +
                     std::to_string(columns));
    }
    if (header_pending) {
      header_pending = false;
      continue;
    }
    for (std::size_t c = 0; c < cells.size(); ++c) {
      double value = 0;
      if (!parse_number(cells[c], value)) {
        fail(path, "line " + std::to_string(line_number) + ", column " + std::to_string(c + 1) + ": \"" + cells[c] +
                       "\" is not a number");
      }
      if (!(std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max())) {
        fail(path, "line " + std::to_string(line_number) + ", column " + std::to_string(c + 1) + ": \"" + cells[c] +
                       "\" is not a finite float32 number");
      }
      values.push_back(static_cast<float>(value));
    }
    ++rows;
  }
  if (rows == 0) fail(path, "contains no data rows");
  Tensor features = ember::empty({static_cast<std::int64_t>(rows), static_cast<std::int64_t>(columns)},
                                 TensorOptions(kFloat32));
  std::copy(values.begin(), values.end(), features.data_ptr<float>());
  return features;
}

}  // namespace ember::cli
