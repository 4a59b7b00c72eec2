// core/cpu/flash_attention_rows_avx2.cpp — the fused attention kernel's row loops
// (core/cpu/flash_attention_rows.h) compiled for AVX2 + FMA (flags: core/CMakeLists.txt).
#define EMBER_FLASH_ROWS_NAMESPACE rows_avx2
#include <ember/core/cpu/flash_attention_rows.h>

namespace ember::cpu {

FlashRowOps<float> flash_row_ops_avx2_f32() { return rows_avx2::row_ops<float>(); }
FlashRowOps<double> flash_row_ops_avx2_f64() { return rows_avx2::row_ops<double>(); }

}  // namespace ember::cpu
