// core/address_sanitizer.h — EMBER_ADDRESS_SANITIZER: 1 in a build with AddressSanitizer, 0
// otherwise. GCC announces ASan with __SANITIZE_ADDRESS__, clang (before 17) only through
// __has_feature(address_sanitizer); the code that must know (the small-object pool and the
// CPU allocator step aside so ASan sees every block, the CUDA emulator tells ASan about its
// fiber stacks, LeakSanitizer's suppressions) asks this one macro, whichever compiler built it.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define EMBER_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBER_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef EMBER_ADDRESS_SANITIZER
#define EMBER_ADDRESS_SANITIZER 0
#endif
