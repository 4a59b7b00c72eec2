// tests/apps/test_cli_eval_predict.cpp — train, then `ember eval` and `ember predict` on the result.
//
// A round trip on the tiny IDX fixture: the accuracy `eval` prints equals the test
// accuracy `train` printed; `predict --json` gives one row per image whose class is the
// argmax of its probabilities, and whose predictions reproduce eval's accuracy.
// The last test trains on a fraction of an epoch of the real Fashion-MNIST when Debian's
// dataset-fashion-mnist is installed (skipped otherwise).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>

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
  // The confusion matrix's rows add up to the test labels: 3, 3 and 2 examples of classes 0, 1, 2.
  std::smatch match;
  int total = 0;
  std::string rest = evaluated.substr(evaluated.find("confusion matrix"));
  std::regex row(R"(\n\s+(\d)\s+(\d+)\s+(\d+)\s+(\d+))");
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), row); it != std::sregex_iterator(); ++it) {
    int sum = std::stoi((*it)[2]) + std::stoi((*it)[3]) + std::stoi((*it)[4]);
    CHECK(sum == (std::stoi((*it)[1]) == 2 ? 2 : 3));
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
  CHECK_THAT(evaluated, Catch::Contains("Ankle boot"));
  CHECK_THAT(evaluated, Catch::Contains("T-shirt/top"));
  // Even this little training beats chance (10%) by far.
  double accuracy = std::stod(line_after(evaluated, "accuracy:   "));
  CHECK(accuracy > 50.0);
}
