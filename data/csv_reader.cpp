// data/csv_reader.cpp — the CSV reader (see csv_reader.h).
//
// Deliberately simple: numeric tables only, no quoting. Every cell is parsed with
// std::from_chars, so "1.5x" or an empty cell is an error naming its line and column
// rather than a silent 0; so is a feature that is not a finite float32 (nan, inf, 1e39).
// A UTF-8 byte order mark (spreadsheet exports) is not part of the first cell.
#include <ember/data/csv_reader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <fstream>
#include <sstream>

#include <ember/core/factories.h>

namespace ember::data {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw IOError("CSV file " + path + ": " + problem);
}

std::vector<std::string> split(const std::string& line, char delimiter) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream stream(line);
  while (std::getline(stream, cell, delimiter)) cells.push_back(cell);
  if (!line.empty() && line.back() == delimiter) cells.emplace_back();  // a trailing empty cell
  return cells;
}

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

void strip_utf8_bom(std::string& first_line) {
  if (first_line.rfind("\xEF\xBB\xBF", 0) == 0) first_line.erase(0, 3);
}

CsvTable read_csv(const std::string& path, const CsvOptions& options) {
  std::ifstream file(path);
  if (!file) fail(path, "cannot open it");

  CsvTable table;
  std::vector<float> features;
  std::vector<std::int64_t> labels;
  std::size_t columns = 0;
  std::int64_t label_column = 0;
  std::string line;
  int line_number = 0;
  bool header_pending = options.has_header;
  while (std::getline(file, line)) {
    ++line_number;
    if (line_number == 1) strip_utf8_bom(line);
    if (trim(line).empty()) continue;  // blank lines (often the last one) are skipped
    std::vector<std::string> cells = split(line, options.delimiter);
    if (columns == 0) {
      columns = cells.size();
      if (columns < 2) fail(path, "line " + std::to_string(line_number) + " has " + std::to_string(columns) +
                                      " column; need a label column and at least one feature");
      label_column = options.label_column < 0 ? options.label_column + static_cast<std::int64_t>(columns)
                                              : options.label_column;
      if (label_column < 0 || label_column >= static_cast<std::int64_t>(columns))
        fail(path, "label column " + std::to_string(options.label_column) + " is out of range for " +
                       std::to_string(columns) + " columns");
    }
    if (cells.size() != columns)
      fail(path, "line " + std::to_string(line_number) + " has " + std::to_string(cells.size()) +
                     " columns, expected " + std::to_string(columns));
    if (header_pending) {
      for (auto& cell : cells) table.header.push_back(trim(cell));
      header_pending = false;
      continue;
    }
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string cell = trim(cells[c]);
      const std::string where = "line " + std::to_string(line_number) + ", column " + std::to_string(c + 1);
      if (static_cast<std::int64_t>(c) == label_column) {
        std::int64_t label = 0;
        auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), label);
        if (error != std::errc() || end != cell.data() + cell.size() || cell.empty())
          fail(path, where + ": label \"" + cell + "\" is not an integer");
        labels.push_back(label);
      } else {
        double value = 0.0;
        auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
        if (error != std::errc() || end != cell.data() + cell.size() || cell.empty())
          fail(path, where + ": \"" + cell + "\" is not a number");
        // nan, inf and values beyond float32's range (1e39 -> inf) would poison training.
        if (!(std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max()))
          fail(path, where + ": \"" + cell + "\" is not a finite float32 number");
        features.push_back(static_cast<float>(value));
      }
    }
  }
  if (labels.empty()) fail(path, "contains no data rows");

  const auto rows = static_cast<std::int64_t>(labels.size());
  const auto feature_count = static_cast<std::int64_t>(columns) - 1;
  table.features = ember::empty({rows, feature_count}, TensorOptions(kFloat32));
  std::copy(features.begin(), features.end(), table.features.data_ptr<float>());
  table.labels = ember::empty({rows}, TensorOptions(kInt64));
  std::copy(labels.begin(), labels.end(), table.labels.data_ptr<std::int64_t>());
  return table;
}

TensorDataset read_csv_dataset(const std::string& path, const CsvOptions& options) {
  CsvTable table = read_csv(path, options);
  return TensorDataset(table.features, table.labels);
}

}  // namespace ember::data
