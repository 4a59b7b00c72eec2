// tests/cuda/emulator_schedules.h — run a kernel test under every emulator schedule.
//
// EMBER_EACH_EMULATOR_SCHEDULE() at the top of a TEST_CASE makes Catch2 run the whole test
// case once per schedule of ember::emulate::test_schedules() — forward, reverse and seeded
// random order of threads at barriers and shuffles (and of blocks), blocks on several host
// threads — and names the schedule in any failure. A kernel that is right only in the
// order its threads happen to run fails under one of them; EMBER_EMULATOR_SCHEDULE=random:N
// reruns just one schedule to reproduce it (cuda/emulate/emulator.h).
#pragma once

#include <catch2/catch.hpp>

#include <ember/cuda/emulate/emulator.h>

#define EMBER_EACH_EMULATOR_SCHEDULE()                                                    \
  const ::ember::emulate::Schedule ember_emulator_schedule =                              \
      GENERATE(Catch::Generators::from_range(::ember::emulate::test_schedules()));        \
  const ::ember::emulate::ScopedSchedule ember_scoped_schedule(ember_emulator_schedule);  \
  INFO("emulator schedule: " << ::ember::emulate::describe(ember_emulator_schedule))
