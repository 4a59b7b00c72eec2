// core/cpu/wide_clones.h — performance code, safe to skip on a first read: the attribute that
// compiles a CPU loop three times (AVX-512, AVX2 with FMA, plain x86-64), the dynamic loader
// picking the widest the CPU has, once (GCC's target_clones). The library itself is built for
// plain x86-64 so it runs anywhere; a loop marked with this gets the wide vectors, and FMA
// instructions for the std::fma it writes, where the CPU has them. ("arch=haswell" is AVX2
// with FMA: an "avx2" clone has no FMA, so std::fma would stay a call into the C library.)
// clang (the fuzz build) gets the plain loops.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EMBER_WIDE_CLONES [[gnu::target_clones("avx512f", "arch=haswell", "default")]]
#else
#define EMBER_WIDE_CLONES
#endif
