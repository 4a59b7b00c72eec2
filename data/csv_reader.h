// data/csv_reader.h — reading a numeric CSV table into features and labels.
//
// Each row is one example: every column is a float32 feature except the label column,
// an integer class index (int64). The first row is a header when has_header is set.
// Problems (missing file, a non-numeric cell, rows of different lengths, a label that is
// not an integer, a feature that is not a finite float32: nan, inf, 1e39) are IOErrors naming
// the file, line and column. A UTF-8 byte order mark at the start of the file is skipped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/data/dataset.h>

namespace ember::data {

struct CsvOptions {
  std::int64_t label_column = -1;  // negative counts from the end; the last column by default
  bool has_header = true;
  char delimiter = ',';
};

struct CsvTable {
  Tensor features;                    // float32 [rows, columns - 1]
  Tensor labels;                      // int64 [rows]
  std::vector<std::string> header;    // empty when has_header is false
};

CsvTable read_csv(const std::string& path, const CsvOptions& options = {});
// Removes a UTF-8 byte order mark (EF BB BF) from the start of a file's first line.
void strip_utf8_bom(std::string& first_line);
// The table as a dataset of (features row, label).
TensorDataset read_csv_dataset(const std::string& path, const CsvOptions& options = {});

}  // namespace ember::data
