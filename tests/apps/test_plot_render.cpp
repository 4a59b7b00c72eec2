// tests/apps/test_plot_render.cpp — `ember plot` end to end: the SVG is well-formed XML with
// a path for every series at exactly the layout's pixels, the PNG has the figure's size,
// and bad inputs give the documented exit codes and messages.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "plot_data.h"
#include "plot_layout.h"
#include "plot_render.h"
#include "test_cli_helpers.h"
#include "xml_reader.h"

using namespace ember::cli;
using ember::testing::cli::run_ember;
using ember::testing::cli::ScratchDir;
using Catch::Matchers::Contains;

namespace {

// cairo is optional (apps/cli/cli_curves.cmake); CI installs it, so there it must be present.
#define REQUIRE_PLOTTING() \
  EMBER_REQUIRE_IN_CI(plotting_available(), "ember was built without cairo: install libcairo2-dev and rebuild")

// A run of three epochs, steps logged every other step. (No three points in a row lie on
// one line, except where the lr stays constant: see as_cairo_stores.)
std::string write_run(const ScratchDir& scratch, const std::string& name, double scale) {
  std::ostringstream log;
  std::int64_t step = 0;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    for (int i = 0; i < 6; ++i) {
      ++step;
      if (step % 2 == 0) {
        log << R"({"event":"step","epoch":)" << epoch << R"(,"step":)" << step
            << R"(,"loss":)" << scale * 2.0 / static_cast<double>(step) << R"(,"lr":)" << 0.1 / epoch << "}\n";
      }
    }
    log << R"({"event":"epoch","epoch":)" << epoch << R"(,"step":)" << step << R"(,"train_loss":)" << scale / epoch
        << R"(,"train_acc":)" << 0.5 + 0.04 * epoch * epoch << R"(,"val_acc":)" << 0.45 + 0.05 * epoch * epoch << R"(,"val_loss":)"
        << scale * 1.2 / epoch << "}\n";
  }
  const std::string path = scratch / (name + ".jsonl");
  std::ofstream(path) << log.str();
  return path;
}

// The points of an SVG path made of M and L commands (cairo writes "M x y L x y ...").
std::vector<Point> path_points(const std::string& d) {
  std::istringstream in(d);
  std::vector<Point> points;
  std::string command;
  while (in >> command) {
    if (command != "M" && command != "L") return {};  // a curve or close: not a polyline
    Point point;
    in >> point.x >> point.y;
    points.push_back(point);
  }
  return points;
}

// The polyline as cairo stores it: cairo drops a segment of length zero and merges a
// segment that continues the previous one in the same direction (an lr that stays
// constant for an epoch is one segment in the file).
std::vector<Point> as_cairo_stores(const std::vector<Point>& points) {
  std::vector<Point> kept;
  for (const Point& point : points) {
    if (!kept.empty() && std::abs(point.x - kept.back().x) < 1e-9 && std::abs(point.y - kept.back().y) < 1e-9) continue;
    if (kept.size() >= 2) {
      const Point& a = kept[kept.size() - 2];
      const Point& b = kept.back();
      const double cross = (b.x - a.x) * (point.y - b.y) - (b.y - a.y) * (point.x - b.x);
      const double dot = (b.x - a.x) * (point.x - b.x) + (b.y - a.y) * (point.y - b.y);
      if (std::abs(cross) < 1e-9 && dot > 0) {
        kept.back() = point;
        continue;
      }
    }
    kept.push_back(point);
  }
  return kept;
}

bool same_points(const std::vector<Point>& a, const std::vector<Point>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::abs(a[i].x - b[i].x) > 0.01 || std::abs(a[i].y - b[i].y) > 0.01) return false;
  }
  return true;
}

std::uint32_t big_endian_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

}  // namespace

TEST_CASE("plot: the SVG is XML with one polyline per series at the layout's pixels", "[apps][plot][render]") {
  REQUIRE_PLOTTING();
  ScratchDir scratch("plot_svg");
  const std::string a = write_run(scratch, "sgd", 1.0), b = write_run(scratch, "adam", 0.5);
  int code = -1;
  const std::string output = run_ember("plot " + a + " " + b + " -o " + (scratch / "curves.svg"), &code);
  INFO(output);
  REQUIRE(code == 0);
  CHECK_THAT(output, Contains("wrote " + (scratch / "curves.svg") + " (2 runs, 3 panels)"));

  const ember::testing::xml::Element svg = ember::testing::xml::parse(ember::testing::read_file(scratch / "curves.svg"));
  CHECK(svg.name == "svg");
  CHECK(svg.attributes.at("xmlns") == "http://www.w3.org/2000/svg");
  const FigureLayout layout = layout_figure(figure_data({read_run_log(a), read_run_log(b)}, false));
  CHECK(svg.attributes.at("viewBox") == "0 0 1200 " + std::to_string(static_cast<int>(std::ceil(layout.height))));

  std::vector<const ember::testing::xml::Element*> paths;
  svg.find_all("path", paths);
  std::vector<std::vector<Point>> polylines;
  for (const auto* path : paths) polylines.push_back(path_points(path->attributes.at("d")));
  std::size_t series_count = 0;
  for (const PanelLayout& panel : layout.panels) {
    for (const SeriesLayout& series : panel.series) {
      ++series_count;
      INFO(panel.title << ": run " << series.run << ", " << series.label << ", " << series.pixels.size() << " points");
      const bool drawn = std::any_of(polylines.begin(), polylines.end(),
                                     [&](const std::vector<Point>& line) { return same_points(line, as_cairo_stores(series.pixels)); });
      CHECK(drawn);
    }
  }
  // Per run: loss per step, train, validation; accuracy train, validation; lr per step.
  CHECK(series_count == 12);
}

TEST_CASE("plot: the PNG has the PNG signature and the figure's size", "[apps][plot][render]") {
  REQUIRE_PLOTTING();
  ScratchDir scratch("plot_png");
  const std::string a = write_run(scratch, "only", 1.0);
  int code = -1;
  const std::string output = run_ember("plot " + a + " -o " + (scratch / "curves.PNG") + " --width 900 --log-loss", &code);
  INFO(output);
  REQUIRE(code == 0);
  const std::string png = ember::testing::read_file(scratch / "curves.PNG");
  REQUIRE(png.size() > 1000);
  CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(png.compare(12, 4, "IHDR") == 0);  // the first chunk, after its 4-byte length
  const FigureLayout layout = layout_figure(figure_data({read_run_log(a)}, true), 900);
  CHECK(big_endian_u32(png, 16) == 900);
  CHECK(big_endian_u32(png, 20) == static_cast<std::uint32_t>(std::ceil(layout.height)));
}

TEST_CASE("plot: bad output names are usage errors, bad logs failed runs", "[apps][plot][render]") {
  ScratchDir scratch("plot_cli_errors");
  const std::string good = write_run(scratch, "good", 1.0);
  int code = -1;
  std::string output = run_ember("plot " + good + " -o " + (scratch / "curves.pdf"), &code);
  CHECK(code == 2);
  CHECK_THAT(output, Contains("unknown image format '.pdf' (expected a file name ending in .svg or .png)"));
  std::filesystem::copy_file(good, scratch / "log.svg");
  output = run_ember("plot " + (scratch / "log.svg") + " -o " + (scratch / "log.svg"), &code);
  CHECK(code == 2);
  CHECK_THAT(output, Contains("-o " + (scratch / "log.svg") + " is the log " + (scratch / "log.svg")));
  output = run_ember("plot " + good, &code);  // no -o
  CHECK(code == 2);
  CHECK_THAT(output, Contains("--output is required"));
  if (!plotting_available()) {
    output = run_ember("plot " + good + " -o " + (scratch / "x.svg"), &code);
    CHECK(code == 1);
    CHECK_THAT(output, Contains("ember was built without cairo: install libcairo2-dev and rebuild"));
    return;
  }
  output = run_ember("plot " + good + " " + (scratch / "missing.jsonl") + " -o " + (scratch / "x.svg"), &code);
  CHECK(code == 1);
  CHECK_THAT(output, Contains("ember: error: " + (scratch / "missing.jsonl") + ": cannot read the metrics log"));
  std::ofstream(scratch / "broken.jsonl") << R"({"event":"epoch","epoch":1,"train_loss":1})" << "\n{\n";
  output = run_ember("plot " + (scratch / "broken.jsonl") + " -o " + (scratch / "x.png"), &code);
  CHECK(code == 1);
  CHECK_THAT(output, Contains((scratch / "broken.jsonl") + ":2: not valid JSON"));
  output = run_ember("plot " + good + " -o " + (scratch / "no/such/dir/x.png"), &code);
  CHECK(code == 1);
  CHECK_THAT(output, Contains("cannot write the plot"));
}
