// tests/fuzz/csv_fuzzer.cpp — libFuzzer harness for the CSV readers: data/csv_reader.cpp
// (read_csv, features + label) and the CLI's apps/cli/csv_layout.cpp (inspect_csv, header
// detection; read_csv_features, a features-only file for `ember predict`). The input is the
// whole file; the reader options (header or not, label column) come from the input's size,
// so every option is tried as the fuzzer grows and shrinks inputs, and an input always
// reproduces with the same options.
//
// Contract: every call loads or throws ember::IOError; what loads is self-consistent:
//   read_csv           features [rows, columns - 1] float32, labels [rows] int64, a header of
//                      `columns` names when has_header;
//   inspect_csv        columns >= 1;
//   read_csv_features  [rows, columns] float32, columns as inspect_csv counts them;
// and when read_csv and read_csv_features (same header setting) both load the same file
// they agree: the same rows, one more column, and equal values outside the label column.
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include <ember/core/factories.h>
#include <ember/data/csv_reader.h>

#include "csv_layout.h"
#include "fuzz_support.h"

using ember::fuzz::finding;
using ember::fuzz::load_or_ioerror;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ember::fuzz::ScratchFile file("csv");
  const std::string& path = file.write(data, size);

  constexpr std::int64_t kLabelColumns[] = {-1, 0, 1, 2, -2, 7, std::numeric_limits<std::int64_t>::min(),
                                            std::numeric_limits<std::int64_t>::max()};
  ember::data::CsvOptions options;
  options.has_header = size % 2 == 0;
  options.label_column = kLabelColumns[(size / 2) % std::size(kLabelColumns)];
  options.delimiter = (size / 16) % 4 == 3 ? ';' : ',';

  const auto table = load_or_ioerror([&] { return ember::data::read_csv(path, options); });
  if (table) {
    const std::int64_t rows = table->labels.numel();
    if (table->features.dim() != 2 || table->labels.dim() != 1 || table->features.size(0) != rows || rows == 0)
      finding("read_csv: features and labels do not have one row per example");
    if (table->features.dtype() != ember::kFloat32 || table->labels.dtype() != ember::kInt64)
      finding("read_csv: wrong dtypes");
    if (options.has_header != !table->header.empty() ||
        (options.has_header && static_cast<std::int64_t>(table->header.size()) != table->features.size(1) + 1))
      finding("read_csv: the header does not have one name per column");
  }

  const auto layout = load_or_ioerror([&] { return ember::cli::inspect_csv(path); });
  if (layout && layout->columns < 1) finding("inspect_csv: fewer than one column");

  const auto features = load_or_ioerror([&] { return ember::cli::read_csv_features(path, options.has_header); });
  if (features) {
    if (features->dim() != 2 || features->size(0) == 0 || features->dtype() != ember::kFloat32)
      finding("read_csv_features: not a non-empty float32 matrix");
    if (layout && features->size(1) != layout->columns)
      finding("read_csv_features: another column count than inspect_csv's");
  }
  if (table && features && options.delimiter == ',') {
    const std::int64_t columns = features->size(1);
    if (table->features.size(0) != features->size(0) || table->features.size(1) + 1 != columns)
      finding("read_csv and read_csv_features read another table from the same file");
    const std::int64_t label = options.label_column < 0 ? options.label_column + columns : options.label_column;
    const float* all = features->data_ptr<float>();
    const float* without_label = table->features.data_ptr<float>();
    for (std::int64_t row = 0, kept = 0; row < features->size(0); ++row)
      for (std::int64_t column = 0; column < columns; ++column) {
        if (column == label) continue;
        const float a = all[row * columns + column], b = without_label[kept++];
        if (std::memcmp(&a, &b, sizeof a) != 0) finding("read_csv and read_csv_features read another value");
      }
  }
  return 0;
}
