// core/cpu/flash_attention_rows_avx512.cpp — the fused attention kernel's row loops
// (core/cpu/flash_attention_rows.h) compiled for AVX512 (flags: core/CMakeLists.txt).
#define EMBER_FLASH_ROWS_NAMESPACE rows_avx512
#include <ember/core/cpu/flash_attention_rows.h>

namespace ember::cpu {

FlashRowOps<float> flash_row_ops_avx512_f32() { return rows_avx512::row_ops<float>(); }
FlashRowOps<double> flash_row_ops_avx512_f64() { return rows_avx512::row_ops<double>(); }

}  // namespace ember::cpu
