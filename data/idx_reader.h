// data/idx_reader.h — reading IDX files (the MNIST / Fashion-MNIST format), gzipped or not.
//
// An IDX file is: two zero bytes, a type code (0x08 unsigned byte, 0x09 signed byte,
// 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, then one
// big-endian u32 per dimension, then the values, big-endian, row-major. Fashion-MNIST's
// train-images-idx3-ubyte.gz is [60000, 28, 28] of u8. Files ending in .gz (or starting
// with gzip's magic bytes) are inflated with zlib while reading.
// The header is read first and only the bytes it promises are inflated (a gzip bomb stops
// there). Every problem (missing file, wrong magic, truncated data, bytes left over, an
// images/labels count mismatch) is an IOError naming the file and what is wrong.
#pragma once

#include <string>

#include <ember/core/tensor.h>
#include <ember/data/dataset.h>

namespace ember::data {

// The whole file as a tensor of the IDX element type (u8 -> UInt8, int32 -> Int32,
// float32 -> Float32, float64 -> Float64; signed byte and int16 widen to Int32).
Tensor read_idx(const std::string& path);

// An images file and a labels file as one dataset: images as float32 scaled to [0, 1]
// (x / 255; scale_to_unit false: the values 0..255 as they are) ([N, rows, cols]), labels
// as int64 [N]. The two counts must match.
TensorDataset read_idx_dataset(const std::string& images_path, const std::string& labels_path,
                               bool scale_to_unit = true);

}  // namespace ember::data
