// apps/cli/plot_axes.cpp — nice ticks and the data-to-pixel map (see plot_axes.h).
#include "plot_axes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ember::cli {

namespace {

// 1, 2, 5 or 10 times a power of ten, the nearest to `raw`.
double nice_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction < 1.5 ? 1.0 : fraction < 3.0 ? 2.0 : fraction < 7.0 ? 5.0 : 10.0;
  return nice * magnitude;
}

double transformed(double value, bool log) { return log ? std::log10(value) : value; }

Axis log_axis(double data_min, double data_max) {
  Axis axis;
  axis.log = true;
  const double first = std::floor(std::log10(data_min));
  double last = std::ceil(std::log10(data_max));
  if (last <= first) last = first + 1;
  axis.low = std::pow(10.0, first);
  axis.high = std::pow(10.0, last);
  const bool fine = last - first < 3;
  for (double decade = first; decade <= last; ++decade) {
    const double power = std::pow(10.0, decade);
    for (double multiple : {1.0, 2.0, 5.0}) {
      if (multiple != 1.0 && !fine) continue;
      const double tick = multiple * power;
      if (tick <= axis.high * (1 + 1e-9)) axis.ticks.push_back(tick);
    }
  }
  return axis;
}

}  // namespace

Axis nice_axis(double data_min, double data_max, bool log, bool integer, int target_ticks) {
  if (data_min > data_max) std::swap(data_min, data_max);
  if (log) return log_axis(data_min, data_max);
  if (data_max == data_min) {  // one value: a range around it
    const double pad = data_min == 0 ? 1.0 : std::fabs(data_min) * 0.1;
    data_min -= pad;
    data_max += pad;
  }
  Axis axis;
  axis.step = nice_step((data_max - data_min) / std::max(1, target_ticks - 1));
  if (integer) axis.step = std::max(axis.step, 1.0);
  const double first = std::floor(data_min / axis.step + 1e-9);
  const double last = std::ceil(data_max / axis.step - 1e-9);
  axis.low = first * axis.step;
  axis.high = last * axis.step;
  for (double index = first; index <= last; ++index) {
    const double tick = index * axis.step;  // from the index, so no error accumulates
    axis.ticks.push_back(std::fabs(tick) < axis.step * 1e-9 ? 0.0 : tick);
  }
  return axis;
}

double Axis::to_pixel(double value) const {
  const double t_low = transformed(low, log), t_high = transformed(high, log);
  return pixel_low + (transformed(value, log) - t_low) / (t_high - t_low) * (pixel_high - pixel_low);
}

std::string Axis::tick_label(double value) const {
  char text[32];
  const double largest = std::max(std::fabs(low), std::fabs(high));
  if (log || step < 1e-3 || largest >= 1e6) {
    std::snprintf(text, sizeof text, "%g", value);
  } else {
    const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
  }
  return text;
}

}  // namespace ember::cli
