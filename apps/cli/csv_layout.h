// apps/cli/csv_layout.h — what a CSV file looks like before it is read: header, columns.
//
// data/csv_reader.h reads a table whose layout it is told (a header or not, which column is
// the label). The CLI does not want to make the user say what the file itself shows:
//   - a header is recognised by its first line holding a cell that is not a number (a
//     headerless file keeps its first example; a file with a header never trains on it);
//   - `ember predict` tells a features-only file from one with a label column by the
//     number of columns compared with the model's input size.
// read_csv_features reads a features-only file (every column a float; no label column,
// which data::read_csv requires), with the same kind of messages: file, line, column.
#pragma once

#include <cstdint>
#include <string>

#include <ember/core/tensor.h>

namespace ember::cli {

struct CsvLayout {
  bool first_line_is_header = false;  // its first non-blank line has a cell that is not a number
  std::int64_t columns = 0;           // cells in that line
};

// IOError "CSV file PATH: cannot open it" / "...: contains no data rows" when empty.
CsvLayout inspect_csv(const std::string& path);

// Every column of every row after the header (when has_header) as float32 [rows, columns].
Tensor read_csv_features(const std::string& path, bool has_header);

}  // namespace ember::cli
