// apps/cli/distributed_mode.cpp — see distributed_mode.h.
#include "distributed_mode.h"

#include <cstdlib>

#include <ember/core/cuda_hooks.h>
#include <ember/core/factories.h>
#include <ember/distributed/process_group.h>

#include "usage_error.h"

namespace ember::cli {

DistributedMode::DistributedMode(const std::string& device_request, double timeout_s)
    : device_request_(device_request) {
  const char* world_size = std::getenv("WORLD_SIZE");
  if (world_size == nullptr || *world_size == '\0') return;
  // --timeout wins over EMBER_TIMEOUT; a malformed EMBER_TIMEOUT is the user's to fix (exit code 2).
  distributed::Milliseconds timeout{};
  try {
    timeout = timeout_s > 0 ? distributed::timeout_from_seconds(timeout_s, "--timeout")
                            : distributed::timeout_from_environment();
  } catch (const ValueError& error) {
    throw UsageError(error.what());
  }
  // One GPU per process: "cuda" (or "auto" with a GPU) means this rank's local GPU.
  bool wants_cuda = device_request == "cuda" || (device_request == "auto" && cuda::is_available()) ||
                    device_request.rfind("cuda:", 0) == 0;
  if (device_request == "cuda" || (device_request == "auto" && wants_cuda)) {
    device_request_ = "cuda:" + std::to_string(distributed::get_local_rank());
  }
  backend_ = wants_cuda ? "nccl" : "gloo";
  if (backend_ == "nccl" && cuda::is_available()) {
    // Select this rank's GPU before the NCCL group exists: its communicator binds to the
    // current device at creation (tutorial §9.3's torch.cuda.set_device(rank)). Without a
    // GPU, init_process_group and choose_device explain what is missing.
    const Device gpu(device_request_ == "cuda" ? "cuda:0" : device_request_);
    cuda::set_device(gpu.has_index() ? gpu.index() : 0);
    collective_device_ = gpu;
  }
  // RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT come from the environment (torchrun's contract).
  distributed::init_process_group(backend_, -1, -1, timeout);
  active_ = true;
  rank_ = distributed::get_rank();
  world_size_ = distributed::get_world_size();
}

DistributedMode::~DistributedMode() {
  if (active_) distributed::destroy_process_group();
}

void DistributedMode::all_reduce_on_backend(Tensor& values) const {
  if (collective_device_ == kCPU) {
    distributed::all_reduce(values, distributed::ReduceOp::Sum);
    return;
  }
  Tensor on_device = values.to(collective_device_);
  distributed::all_reduce(on_device, distributed::ReduceOp::Sum);
  values = on_device.to(kCPU);
}

DistributedMode::StepAgreement DistributedMode::agree_on_step(double loss, bool interrupted) const {
  if (!active_) return {loss, interrupted};
  Tensor values = tensor({loss, interrupted ? 1.0 : 0.0}, kFloat64);  // one collective for both
  all_reduce_on_backend(values);
  const double* sums = values.data_ptr<double>();
  return {sums[0] / world_size_, sums[1] > 0};
}

std::vector<std::vector<std::uint8_t>> DistributedMode::all_gather_bytes(const std::vector<std::uint8_t>& bytes) const {
  if (!active_) return {bytes};
  // A [world_size, n] table, this rank's row filled and the others zero: summed over ranks
  // (exact in int64) every row holds its rank's bytes. One all-reduce, on any backend.
  const auto length = static_cast<std::int64_t>(bytes.size());
  Tensor table = zeros({world_size_, length}, kLong);
  std::int64_t* row = table.data_ptr<std::int64_t>() + rank_ * length;
  for (std::int64_t i = 0; i < length; ++i) row[i] = bytes[static_cast<std::size_t>(i)];
  all_reduce_on_backend(table);
  std::vector<std::vector<std::uint8_t>> gathered(static_cast<std::size_t>(world_size_));
  const std::int64_t* sums = table.data_ptr<std::int64_t>();
  for (int rank = 0; rank < world_size_; ++rank)
    for (std::int64_t i = 0; i < length; ++i)
      gathered[static_cast<std::size_t>(rank)].push_back(static_cast<std::uint8_t>(sums[rank * length + i]));
  return gathered;
}

void DistributedMode::sum_epoch_totals(double& loss_sum, std::int64_t& correct, std::int64_t& seen) const {
  if (!active_) return;
  Tensor sums = tensor({loss_sum}, kFloat64);
  all_reduce_on_backend(sums);
  Tensor counts = tensor({correct, seen});  // int64: exact
  all_reduce_on_backend(counts);
  loss_sum = sums.data_ptr<double>()[0];
  correct = counts.data_ptr<std::int64_t>()[0];
  seen = counts.data_ptr<std::int64_t>()[1];
}

void DistributedMode::gather_epoch_totals(double loss_sum, std::int64_t correct, std::int64_t seen,
                                          std::vector<double>& loss_sums, std::vector<std::int64_t>& corrects,
                                          std::vector<std::int64_t>& seens) const {
  if (!active_) {
    loss_sums = {loss_sum};
    corrects = {correct};
    seens = {seen};
    return;
  }
  // A gather as a sum: each rank fills its own slot, the others are 0, and x + 0 is x.
  const auto ranks = static_cast<std::int64_t>(world_size_);
  Tensor sums = zeros({ranks}, kFloat64);
  sums.data_ptr<double>()[rank_] = loss_sum;
  all_reduce_on_backend(sums);
  Tensor counts = zeros({2 * ranks}, kInt64);
  counts.data_ptr<std::int64_t>()[2 * rank_] = correct;
  counts.data_ptr<std::int64_t>()[2 * rank_ + 1] = seen;
  all_reduce_on_backend(counts);
  loss_sums.assign(sums.data_ptr<double>(), sums.data_ptr<double>() + ranks);
  corrects.clear();
  seens.clear();
  for (std::int64_t r = 0; r < ranks; ++r) {
    corrects.push_back(counts.data_ptr<std::int64_t>()[2 * r]);
    seens.push_back(counts.data_ptr<std::int64_t>()[2 * r + 1]);
  }
}

bool DistributedMode::any_rank(bool flag) const {
  if (!active_) return flag;
  Tensor value = tensor({flag ? 1.0 : 0.0}, kFloat64);
  all_reduce_on_backend(value);
  return value.data_ptr<double>()[0] > 0;
}

void DistributedMode::barrier() const {
  if (active_) distributed::barrier();
}

}  // namespace ember::cli
