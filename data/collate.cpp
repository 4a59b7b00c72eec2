// data/collate.cpp — default_collate (see collate.h).
#include <ember/data/collate.h>

#include <ember/core/native.h>

namespace ember::data {

Example default_collate(const std::vector<Example>& examples) {
  EMBER_CHECK(!examples.empty(), ValueError, "default_collate: cannot collate an empty list of examples");
  std::vector<Tensor> data;
  std::vector<Tensor> targets;
  data.reserve(examples.size());
  targets.reserve(examples.size());
  for (const auto& example : examples) {
    data.push_back(example.data);
    targets.push_back(example.target);
  }
  // A dataset may have no targets (unsupervised data): keep the batch's target undefined.
  const bool has_targets = examples.front().target.defined();
  return {native::stack(data, 0), has_targets ? native::stack(targets, 0) : Tensor()};
}

}  // namespace ember::data
