// apps/cli/plot_axes.h — the axes of `ember plot`: a range with "nice" ticks, and the map from
// data values to pixels.
//
// Ticks are round numbers people read at a glance: 1, 2 or 5 times a power of ten apart,
// about six to an axis, and the axis runs from a tick below the smallest value to a tick
// above the largest (so every point lies inside the frame). A logarithmic axis has a tick at
// each power of ten, and at 2 and 5 times it when it spans fewer than three decades; it
// shows only positive values.
#pragma once

#include <string>
#include <vector>

namespace ember::cli {

struct Axis {
  double low = 0, high = 1;  // the data values at the two ends
  bool log = false;
  double step = 0;           // the tick spacing (linear axes)
  std::vector<double> ticks;
  // Pixels of `low` and `high` (a y axis runs upwards: pixel_low is the frame's bottom).
  double pixel_low = 0, pixel_high = 1;

  double to_pixel(double value) const;
  std::string tick_label(double value) const;
};

// An axis covering [data_min, data_max] (equal values get a range around them). `integer`:
// ticks are whole numbers (steps, epochs). `log`: logarithmic; data_min must be > 0.
Axis nice_axis(double data_min, double data_max, bool log = false, bool integer = false, int target_ticks = 6);

}  // namespace ember::cli
