// apps/cli/plot_render.cpp — cairo drawing of an `ember plot` figure (see plot_render.h).
//
// Everything is drawn in the layout's pixel coordinates with cairo's identity transform
// (text alone is rotated, for the y-axis labels), so a series' path in the SVG file has
// exactly the layout's coordinates — which is what tests/apps/test_plot_render.cpp checks.
#include "plot_render.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <memory>

#include <ember/core/address_sanitizer.h>
#include <ember/core/error.h>

#include "usage_error.h"

#if EMBER_HAVE_CAIRO
#include <cairo-svg.h>
#include <cairo.h>
#endif

namespace ember::cli {

ImageFormat image_format_of(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".svg") return ImageFormat::Svg;
  if (extension == ".png") return ImageFormat::Png;
  throw UsageError(make_message("-o ", path, ": unknown image format '", extension,
                                "' (expected a file name ending in .svg or .png)"));
}

bool plotting_available() {
#if EMBER_HAVE_CAIRO
  return true;
#else
  return false;
#endif
}

std::string plotting_unavailable() { return "ember was built without cairo: install libcairo2-dev and rebuild"; }

#if EMBER_HAVE_CAIRO

// fontconfig (which cairo asks for fonts) leaks a few blocks while it parses its
// configuration files, lost inside the library: nothing ember can free. Under
// AddressSanitizer (make test-sanitize) LeakSanitizer would fail every `ember plot` at exit,
// so this build tells it to ignore leaks made inside fontconfig only.
#if EMBER_ADDRESS_SANITIZER
extern "C" const char* __lsan_default_suppressions() { return "leak:libfontconfig.so\n"; }
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }  // quiet stderr
#endif

namespace {

constexpr const char* kFont = "DejaVu Sans";  // Debian's default sans-serif (fonts-dejavu-core)

void set_grey(cairo_t* cr, double level) { cairo_set_source_rgb(cr, level, level, level); }

void set_colour(cairo_t* cr, const Colour& colour, double alpha = 1.0) {
  cairo_set_source_rgba(cr, colour.red, colour.green, colour.blue, alpha);
}

void font(cairo_t* cr, double size, bool bold = false) {
  cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

// Text with its anchor at (x, y): align 0 left, 0.5 centre, 1 right; vertically centred.
void text_at(cairo_t* cr, const std::string& text, double x, double y, double align) {
  cairo_text_extents_t extents;
  cairo_text_extents(cr, text.c_str(), &extents);
  cairo_move_to(cr, x - align * extents.x_advance, y - (extents.y_bearing + extents.height / 2));
  cairo_show_text(cr, text.c_str());
  cairo_new_path(cr);
}

// How a series' line looks: thin and faint for every step, dashed for validation.
void line_style(cairo_t* cr, SeriesStyle style, const Colour& colour) {
  const double dashes[] = {7.0, 4.0};
  switch (style) {
    case SeriesStyle::PerStep:
      set_colour(cr, colour, 0.45);
      cairo_set_line_width(cr, 1.0);
      cairo_set_dash(cr, nullptr, 0, 0);
      break;
    case SeriesStyle::Train:
      set_colour(cr, colour);
      cairo_set_line_width(cr, 2.0);
      cairo_set_dash(cr, nullptr, 0, 0);
      break;
    case SeriesStyle::Validation:
      set_colour(cr, colour);
      cairo_set_line_width(cr, 2.0);
      cairo_set_dash(cr, dashes, 2, 0);
      break;
  }
}

void draw_series(cairo_t* cr, const SeriesLayout& series) {
  const Colour colour = run_colour(series.run);
  line_style(cr, series.style, colour);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  // One path per series, M then L for every point: tests read it back from the SVG.
  cairo_move_to(cr, series.pixels.front().x, series.pixels.front().y);
  for (std::size_t i = 1; i < series.pixels.size(); ++i) cairo_line_to(cr, series.pixels[i].x, series.pixels[i].y);
  if (series.pixels.size() == 1) cairo_line_to(cr, series.pixels[0].x, series.pixels[0].y);  // a lone point
  cairo_stroke(cr);
  if (!series.markers) return;
  cairo_set_dash(cr, nullptr, 0, 0);
  cairo_set_line_width(cr, 1.5);
  for (const Point& point : series.pixels) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, point.x, point.y, 3.2, 0, 2 * M_PI);
  }
  if (series.style == SeriesStyle::Validation) {  // hollow dots for validation, filled for train
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_fill_preserve(cr);
    set_colour(cr, colour);
    cairo_stroke(cr);
  } else {
    cairo_fill(cr);
  }
}

void draw_panel(cairo_t* cr, const PanelLayout& panel) {
  const Rect& frame = panel.frame;
  // Grid lines at the ticks, then the tick labels.
  cairo_set_line_width(cr, 1.0);
  font(cr, 11);
  for (double tick : panel.y.ticks) {
    const double y = std::round(panel.y.to_pixel(tick)) + 0.5;  // crisp 1-pixel lines
    set_grey(cr, 0.90);
    cairo_move_to(cr, frame.x, y);
    cairo_line_to(cr, frame.right(), y);
    cairo_stroke(cr);
    set_grey(cr, 0.25);
    text_at(cr, panel.y.tick_label(tick), frame.x - 6, y, 1.0);
  }
  for (double tick : panel.x.ticks) {
    const double x = std::round(panel.x.to_pixel(tick)) + 0.5;
    set_grey(cr, 0.90);
    cairo_move_to(cr, x, frame.y);
    cairo_line_to(cr, x, frame.bottom());
    cairo_stroke(cr);
    set_grey(cr, 0.25);
    text_at(cr, panel.x.tick_label(tick), x, frame.bottom() + 12, 0.5);
  }
  set_grey(cr, 0.55);
  cairo_rectangle(cr, frame.x + 0.5, frame.y + 0.5, frame.width - 1, frame.height - 1);
  cairo_stroke(cr);

  // Titles and axis labels.
  set_grey(cr, 0.1);
  font(cr, 14, /*bold=*/true);
  text_at(cr, panel.title, frame.x, frame.y - 15, 0.0);
  font(cr, 12);
  set_grey(cr, 0.2);
  text_at(cr, panel.x_label, frame.x + frame.width / 2, frame.bottom() + 34, 0.5);
  cairo_save(cr);
  cairo_translate(cr, frame.x - 62, frame.y + frame.height / 2);
  cairo_rotate(cr, -M_PI / 2);
  text_at(cr, panel.y_label, 0, 0, 0.5);
  cairo_restore(cr);

  // The series, clipped to the frame (with room for a marker on its edge): per-step lines
  // first, so epoch lines stay on top.
  cairo_save(cr);
  cairo_rectangle(cr, frame.x - 5, frame.y - 5, frame.width + 10, frame.height + 10);
  cairo_clip(cr);
  for (SeriesStyle layer : {SeriesStyle::PerStep, SeriesStyle::Train, SeriesStyle::Validation}) {
    for (const SeriesLayout& series : panel.series) {
      if (series.style == layer) draw_series(cr, series);
    }
  }
  cairo_restore(cr);
}

void draw_legend(cairo_t* cr, const std::vector<LegendItem>& legend) {
  for (const LegendItem& item : legend) {
    line_style(cr, item.style, item.is_run ? run_colour(item.run) : Colour{0.35, 0.35, 0.35});
    if (item.is_run) cairo_set_line_width(cr, 4.0);
    if (item.style == SeriesStyle::PerStep) cairo_set_source_rgba(cr, 0.35, 0.35, 0.35, 0.7);
    cairo_move_to(cr, item.x, item.y);
    cairo_line_to(cr, item.x + kLegendSampleLength, item.y);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    font(cr, 13, item.is_run);
    set_grey(cr, 0.1);
    text_at(cr, item.text, item.x + kLegendSampleLength + 6, item.y, 0.0);
  }
}

void draw_figure(cairo_t* cr, const FigureLayout& layout) {
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  set_grey(cr, 0.1);
  font(cr, 18, /*bold=*/true);
  text_at(cr, layout.title, layout.width / 2, 20 + 16, 0.5);
  draw_legend(cr, layout.legend);
  for (const PanelLayout& panel : layout.panels) draw_panel(cr, panel);
}

struct SurfaceDeleter {
  void operator()(cairo_surface_t* surface) const { cairo_surface_destroy(surface); }
};
struct ContextDeleter {
  void operator()(cairo_t* cr) const { cairo_destroy(cr); }
};

void check_status(cairo_status_t status, const std::string& path) {
  EMBER_CHECK(status == CAIRO_STATUS_SUCCESS, IOError, "-o ", path, ": cannot write the plot (",
              cairo_status_to_string(status), ")");
}

}  // namespace

void render_figure(const FigureLayout& layout, const std::string& path, ImageFormat format) {
  const int width = static_cast<int>(std::ceil(layout.width));
  const int height = static_cast<int>(std::ceil(layout.height));
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(
      format == ImageFormat::Svg ? cairo_svg_surface_create(path.c_str(), width, height)
                                 : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height));
  check_status(cairo_surface_status(surface.get()), path);
  {
    std::unique_ptr<cairo_t, ContextDeleter> cr(cairo_create(surface.get()));
    draw_figure(cr.get(), layout);
    check_status(cairo_status(cr.get()), path);
  }
  if (format == ImageFormat::Png) check_status(cairo_surface_write_to_png(surface.get(), path.c_str()), path);
  cairo_surface_finish(surface.get());  // the SVG is written out here
  check_status(cairo_surface_status(surface.get()), path);
}

#else

void render_figure(const FigureLayout&, const std::string&, ImageFormat) {
  throw NotImplementedError(plotting_unavailable());
}

#endif

}  // namespace ember::cli
