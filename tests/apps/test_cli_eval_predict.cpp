// tests/apps/test_cli_eval_predict.cpp — train, then `ember eval` and `ember predict` on the result.
//
// A round trip on the tiny IDX fixture: the accuracy `eval` prints equals the test
// accuracy `train` printed; `predict --json` gives one row per image whose class is the
// argmax of its probabilities, and whose predictions reproduce eval's accuracy. CSV input
// to predict may carry a label column or be features only.
// The last test trains on a fraction of an epoch of the real Fashion-MNIST when Debian's
// dataset-fashion-mnist is installed (skipped otherwise).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {
// The text after `label` up to the end of its line.
std::string line_after(const std::string& output, const std::string& label) {
  auto at = output.find(label);
  if (at == std::string::npos) return "";
  at += label.size();
  return output.substr(at, output.find('\n', at) - at);
}
}  // namespace

TEST_CASE("ember eval and predict read what ember train saved", "[cli][eval][predict]") {
  ScratchDir scratch("eval_predict");
  std::string data = "idx:" + fixtures_dir() + "/idx";
  std::string checkpoint = scratch / "model.st";
  int code = -1;
  std::string trained = run_ember("train --data " + data + " --hidden 8 --epochs 3 --batch-size 4 --lr 0.5 --seed 1 --quiet --save " +
                                      checkpoint,
                                  &code);
  REQUIRE(code == 0);
  CHECK_THAT(trained, Catch::Contains("checkpoint:      " + checkpoint + " (epoch 3)"));
  std::string test_accuracy = line_after(trained, "test accuracy:   ");
  test_accuracy = test_accuracy.substr(0, test_accuracy.find(' '));  // "87.50%"

  // eval: defaults to the checkpoint's data, its test split.
  std::string evaluated = run_ember("eval --checkpoint " + checkpoint, &code);
  INFO(evaluated);
  REQUIRE(code == 0);
  CHECK_THAT(evaluated, Catch::Contains("test split (8 examples)"));
  CHECK(line_after(evaluated, "accuracy:   ").rfind(test_accuracy, 0) == 0);
  CHECK_THAT(evaluated, Catch::Contains("per-class accuracy:"));
  CHECK_THAT(evaluated, Catch::Contains("confusion matrix (rows: true class, columns: predicted class):"));
  // Classes without names: the matrix is labelled with indices, once. Its rows add up to the
  // test labels: 3, 3 and 2 examples of classes 0, 1, 2.
  std::string rest = evaluated.substr(evaluated.find("confusion matrix"));
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < rest.size();) {
    std::size_t end = rest.find('\n', at);
    lines.push_back(rest.substr(at, end - at));
    at = end == std::string::npos ? rest.size() : end + 1;
  }
  REQUIRE(lines.size() == 5);
  CHECK(lines[1] == "            0      1      2");
  int total = 0;
  std::regex row(R"(    (\d) +(\d+) +(\d+) +(\d+))");
  for (int c = 0; c < 3; ++c) {
    std::smatch match;
    INFO(lines[2 + c]);
    REQUIRE(std::regex_match(lines[2 + c], match, row));
    CHECK(std::stoi(match[1]) == c);
    int sum = std::stoi(match[2]) + std::stoi(match[3]) + std::stoi(match[4]);
    CHECK(sum == (c == 2 ? 2 : 3));
    total += sum;
  }
  CHECK(total == 8);

  // predict --json on the test images: one row each, class = argmax of probabilities.
  std::string images = fixtures_dir() + "/idx/t10k-images-idx3-ubyte";
  std::string predicted = run_program("ember", "predict --checkpoint " + checkpoint + " --input " + images + " --json", &code);
  REQUIRE(code == 0);
  nlohmann::json result = nlohmann::json::parse(predicted);
  REQUIRE(result.at("predictions").size() == 8);
  std::string labels = read_file(fixtures_dir() + "/idx/t10k-labels-idx1-ubyte").substr(8);
  int correct = 0;
  for (const auto& row : result.at("predictions")) {
    std::vector<double> p = row.at("probabilities").get<std::vector<double>>();
    REQUIRE(p.size() == 3);
    double sum = p[0] + p[1] + p[2];
    CHECK(sum == Approx(1.0).epsilon(1e-5));
    auto argmax = std::max_element(p.begin(), p.end()) - p.begin();
    CHECK(row.at("predicted").get<long>() == argmax);
    CHECK(row.at("label").is_null());
    correct += row.at("predicted").get<int>() == labels[row.at("index").get<int>()];
  }
  char expected_accuracy[16];
  std::snprintf(expected_accuracy, sizeof expected_accuracy, "%.2f%%", 100.0 * correct / 8);
  CHECK(test_accuracy == expected_accuracy);

  // The table form, and CSV input (its label column shown next to the prediction).
  std::string table = run_ember("predict --checkpoint " + checkpoint + " --input " + images, &code);
  CHECK(code == 0);
  CHECK_THAT(table, Catch::Contains("index label predicted  class"));
  std::string csv_model = scratch / "csv.st";
  run_ember("train --data csv:" + fixtures_dir() + "/tiny.csv --hidden 5 --epochs 2 --quiet --save " + csv_model, &code);
  REQUIRE(code == 0);
  table = run_ember("predict --checkpoint " + csv_model + " --input " + fixtures_dir() + "/tiny.csv", &code);
  CHECK(code == 0);
  CHECK(std::count(table.begin(), table.end(), '\n') == 13);  // header + 12 rows

  // A data set whose examples do not fit the model.
  std::string wrong = run_ember("eval --checkpoint " + checkpoint + " --data toy", &code);
  CHECK(code == 1);
  CHECK_THAT(wrong, Catch::Contains("has 2 features per example but the checkpoint's model expects 16"));
  wrong = run_ember("predict --checkpoint " + csv_model + " --input " + fixtures_dir() + "/idx/t10k-labels-idx1-ubyte", &code);
  CHECK(code == 1);
  CHECK_THAT(wrong, Catch::Contains("t10k-labels-idx1-ubyte"));
}

TEST_CASE("ember predict reads CSV rows with or without a label column", "[cli][predict]") {
  ScratchDir scratch("predict_csv");
  std::string model = scratch / "csv.st";
  int code = -1;
  run_ember("train --data csv:" + fixtures_dir() + "/tiny.csv --hidden 5 --epochs 2 --seed 4 --quiet --save " + model,
            &code);
  REQUIRE(code == 0);
  // The same 12 rows: labelled with a header, labelled without, features only, features
  // only with a header line.
  std::string labelled = fixtures_dir() + "/tiny_noheader.csv";
  std::string features = scratch / "features.csv", features_header = scratch / "features_header.csv";
  {
    std::ifstream in(labelled);
    std::ofstream plain(features), headed(features_header);
    headed << "p0";
    for (int i = 1; i < 16; ++i) headed << ",p" << i;
    headed << "\n";
    std::string line;
    while (std::getline(in, line)) {
      plain << line.substr(line.find(',') + 1) << "\n";
      headed << line.substr(line.find(',') + 1) << "\n";
    }
  }
  auto predict = [&](const std::string& input, const std::string& flags) {
    std::string output = run_program("ember", "predict --checkpoint " + model + " --input " + input + " --json " + flags, &code);
    REQUIRE(code == 0);
    return nlohmann::json::parse(output).at("predictions");
  };
  nlohmann::json reference = predict(fixtures_dir() + "/tiny.csv", "");
  REQUIRE(reference.size() == 12);
  for (const auto& [input, flags] : {std::pair<std::string, std::string>{labelled, ""},
                                     {features, ""},
                                     {features, "--no-label"},
                                     {features_header, ""}}) {
    INFO(input << " " << flags);
    nlohmann::json rows = predict(input, flags);
    REQUIRE(rows.size() == 12);
    bool has_labels = input == labelled;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CHECK(rows[i].at("predicted") == reference[i].at("predicted"));
      CHECK(rows[i].at("probabilities") == reference[i].at("probabilities"));
      CHECK(rows[i].at("label") == (has_labels ? reference[i].at("label") : nlohmann::json(nullptr)));
    }
  }
  // The table shows "-" for a missing label.
  std::string table = run_ember("predict --checkpoint " + model + " --input " + features, &code);
  CHECK(code == 0);
  CHECK_THAT(table, Catch::Contains("\n    0     -         "));

  // Column counts that fit neither layout, and --no-label on a file with a label column.
  std::string output = run_ember("predict --checkpoint " + model + " --input " + labelled + " --no-label", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains(labelled + ": rows have 17 columns but the model takes 16 features "
                                                "(with --no-label every column is a feature)"));
  write_bytes(scratch / "short.csv", "1,2,3\n4,5,6\n");
  output = run_ember("predict --checkpoint " + model + " --input " + scratch / "short.csv", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("short.csv: rows have 3 columns but the model takes 16 features "
                                     "(expected 16 columns, or 17 with a label column)"));
  write_bytes(scratch / "bad.csv", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,x\n");
  output = run_ember("predict --checkpoint " + model + " --input " + scratch / "bad.csv", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("bad.csv: line 2, column 16: \"x\" is not a number"));
}

TEST_CASE("ember train on a fraction of an epoch of Fashion-MNIST", "[cli][fashion-mnist]") {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    WARN("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist): skipped");
    return;
  }
  // --val-split 0.95 leaves 3000 training examples: a twentieth of an epoch.
  ScratchDir scratch("fashion");
  int code = -1;
  std::string output =
      run_ember("train --epochs 1 --val-split 0.95 --quiet --save " + scratch / "fm.st", &code);
  INFO(output);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains("784-256-128-10 MLP"));
  CHECK_THAT(output, Catch::Contains("(3000 examples)"));
  CHECK_THAT(output, Catch::Contains("(10000 examples)"));
  std::string evaluated = run_ember("eval --checkpoint " + scratch / "fm.st", &code);
  REQUIRE(code == 0);
  INFO(evaluated);
  CHECK_THAT(evaluated, Catch::Contains("Ankle boot"));
  CHECK_THAT(evaluated, Catch::Contains("T-shirt/top"));
  // The confusion matrix: full names on the rows, short ones on the columns.
  std::string matrix = evaluated.substr(evaluated.find("confusion matrix"));
  CHECK_THAT(matrix, Catch::Contains("\n                  Tshirt Trousr Pullov  Dress   Coat Sandal  Shirt Sneakr    Bag   Boot\n"));
  std::regex row(R"(\n    (\d) (.{11})((?: +\d+){10})(?=\n))");
  const char* names[] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  int rows = 0;
  for (auto it = std::sregex_iterator(matrix.begin(), matrix.end(), row); it != std::sregex_iterator(); ++it, ++rows) {
    int c = std::stoi((*it)[1]);
    CHECK(c == rows);
    std::string name = (*it)[2];
    CHECK(name.substr(0, name.find_last_not_of(' ') + 1) == names[c]);
    std::istringstream counts((*it)[3]);
    int sum = 0, count = 0;
    while (counts >> count) sum += count;
    CHECK(sum == 1000);  // each class has 1000 test images
  }
  CHECK(rows == 10);
  // Even this little training beats chance (10%) by far.
  double accuracy = std::stod(line_after(evaluated, "accuracy:   "));
  CHECK(accuracy > 50.0);
}
