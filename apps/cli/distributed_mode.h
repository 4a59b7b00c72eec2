// apps/cli/distributed_mode.h — `ember train` as one rank of a data-parallel job (§9.3).
//
// When `ember train` finds torchrun's environment (WORLD_SIZE, set by `ember-run` or
// torchrun), it trains as the tutorial's DDP script does:
//   - it joins the process group: Gloo for CPU training, NCCL for --device cuda, where
//     "cuda" / "auto" mean cuda:LOCAL_RANK (one GPU per process). For NCCL that GPU is
//     made the current device *before* init_process_group: the NCCL group binds its
//     communicator to the current device when it is created, so without this every rank
//     would bind GPU 0. The step and epoch agreements then travel as tensors on that GPU;
//   - the training set is cut by a DistributedSampler (shuffled with --seed + epoch), so
//     each rank trains on its own 1/world_size of every epoch, --batch-size examples per step;
//   - the model is wrapped in DistributedDataParallel, which averages the gradients, so
//     every rank takes the same step: N ranks with batch B train like one process with
//     batch N*B taking the same examples;
//   - each step's loss (and whether Ctrl-C was pressed on any rank) is all-reduced, so the
//     progress, the step log and the stop all agree across ranks; the epoch's loss,
//     accuracy and example count are summed over ranks;
//   - only rank 0 prints progress and the summary, writes the --log and the --save
//     checkpoint, and evaluates validation and test accuracy (every rank's model is the same).
//   - the rendezvous and every collective wait at most --timeout seconds for a peer (else
//     EMBER_TIMEOUT, which `ember-run --timeout` sets, else 600 s); a bad EMBER_TIMEOUT is
//     a usage error (exit code 2) naming the variable.
// Without WORLD_SIZE nothing here runs and `ember train` is the single-process trainer
// (--timeout is then unused).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ember/core/device.h>
#include <ember/core/tensor.h>

namespace ember::cli {

class DistributedMode {
 public:
  // Reads the environment; when it names a job, joins its process group. `device_request`
  // is --device; device_request() gives the one this rank must use.
  // timeout_s: --timeout (0: not given).
  DistributedMode(const std::string& device_request, double timeout_s);
  ~DistributedMode();  // leaves the process group (after a barrier when training finished)
  DistributedMode(const DistributedMode&) = delete;
  DistributedMode& operator=(const DistributedMode&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  bool is_main() const { return rank_ == 0; }  // true also when not distributed
  const std::string& device_request() const { return device_request_; }
  const std::string& backend() const { return backend_; }

  // The mean of `loss` over ranks, and whether any rank saw `interrupted` (one all-reduce).
  struct StepAgreement {
    double loss;
    bool interrupted;
  };
  StepAgreement agree_on_step(double loss, bool interrupted) const;
  // Sums the epoch's totals over ranks, in place.
  void sum_epoch_totals(double& loss_sum, std::int64_t& correct, std::int64_t& seen) const;
  // Every rank's totals, indexed by rank (a mid-epoch checkpoint keeps each rank's own sum,
  // so the resumed ranks add to exactly what they had). Alone: one entry each.
  void gather_epoch_totals(double loss_sum, std::int64_t correct, std::int64_t seen, std::vector<double>& loss_sums,
                           std::vector<std::int64_t>& corrects, std::vector<std::int64_t>& seens) const;
  // Every rank's `bytes`, indexed by rank (each rank passes as many; alone: {bytes}). The GPT
  // trainer's checkpoint keeps each rank's generator state with it.
  std::vector<std::vector<std::uint8_t>> all_gather_bytes(const std::vector<std::uint8_t>& bytes) const;
  // Whether `flag` is true on any rank (one all-reduce; alone: the flag).
  bool any_rank(bool flag) const;
  // Every rank waits for the others (before rank 0's summary leaves the group).
  void barrier() const;

 private:
  bool active_ = false;
  int rank_ = 0;
  int world_size_ = 1;
  // Collective tensors for the agreements must live where the backend works: the CPU for
  // Gloo, this rank's GPU for NCCL. all_reduce_on_backend sums `values` there (in place).
  void all_reduce_on_backend(Tensor& values) const;
  std::string device_request_;
  std::string backend_;
  Device collective_device_ = kCPU;
};

}  // namespace ember::cli
