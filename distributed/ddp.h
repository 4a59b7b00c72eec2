// distributed/ddp.h — DistributedDataParallel: one model replica per process, averaged gradients.
//
// Tutorial §9.3 (torch.nn.parallel.DistributedDataParallel). Every rank holds a full copy
// of the model and trains on its own slice of each batch (see DistributedSampler).
// Keeping the copies identical needs two things:
//   1. the same start: the constructor broadcasts every parameter and buffer from rank 0;
//   2. the same steps: after backward every gradient is the *average* over ranks, so each
//      optimizer makes the same update. With a mean loss, 2 ranks × batch B then train
//      exactly like 1 process × batch 2B.
// How gradients are averaged (as PyTorch's Reducer, minus its background thread):
//   - parameters are grouped into buckets of about bucket_cap_mb, in *reverse*
//     registration order — backward produces the last layer's gradients first;
//   - each parameter gets a post-accumulate-grad hook; when the last gradient of a bucket
//     has arrived, the bucket is flattened into one buffer (main thread) and handed to
//     DDP's communication thread, which all-reduces it (sum), divides by the world size
//     and copies the averages back into the .grad tensors — while autograd goes on with
//     earlier layers on the main thread. The hook that completes the *last* bucket waits
//     for every queued all-reduce, so when backward() returns the gradients are averaged
//     (and a failed all-reduce is rethrown from backward()). While backward runs, do not
//     call collectives on the same group yourself: ranks must issue them in one order.
//     set_communication_overlap(false) does each bucket's all-reduce inline instead (the
//     same arithmetic, bit for bit: for teaching and for tests).
//   - on GPUs (a group whose all_reduce_async queues the work: NCCL) the communication
//     thread only queues each bucket's average with its own event; the last hook waits
//     for those events (ember's stream waits, not earlier) and writes the gradients back,
//     so backward's kernels are not held up behind the communication.
//   - every parameter that requires grad must receive a gradient in every backward
//     (PyTorch's find_unused_parameters=false); otherwise its bucket is never reduced
//     and the next forward throws DistributedError naming the parameters.
// Robustness:
//   - a backward interrupted by an exception (a failed all-reduce, a throwing hook, an
//     error in a backward formula) leaves some buckets half filled. The next forward
//     notices, waits for any all-reduce still running, and starts from clean buckets. To
//     tell that case from an unused parameter, DDP keeps the latest forward's graph root
//     until its backward completes: a parameter that got no gradient although the graph
//     reaches it was cut off by the exception; one the graph does not reach is unused.
//   - the gradient hooks hold a weak handle to the DDP object and are removed when it is
//     destroyed, so a module that outlives its DDP wrapper trains on safely without it.
// no_sync(): while the returned guard lives, backward only accumulates locally (gradient
// accumulation); the first backward after it averages the accumulated gradients.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ember/distributed/communication_thread.h>
#include <ember/distributed/process_group.h>
#include <ember/nn/module.h>

namespace ember::distributed {

class DistributedDataParallel : public nn::Module {
 public:
  // group == nullptr: the default process group. bucket_cap_mb: PyTorch's default 25.
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module, ProcessGroup* group = nullptr,
                                   double bucket_cap_mb = 25.0);
  ~DistributedDataParallel() override;  // removes its gradient hooks from the parameters
  Tensor forward(const Tensor& input) override;
  std::string name() const override { return "DistributedDataParallel"; }
  const std::shared_ptr<nn::Module>& module() const { return module_; }

  // RAII: gradient synchronisation is off while it lives (ddp.no_sync() in PyTorch).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel& ddp) : ddp_(ddp), previous_(ddp.sync_enabled_) {
      ddp_.sync_enabled_ = false;
    }
    ~NoSyncGuard() { ddp_.sync_enabled_ = previous_; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  // The buckets as lists of indices into module()->parameters() (for tests and teaching).
  std::vector<std::vector<std::size_t>> bucket_layout() const;
  // How many bucket all-reduces have run since construction.
  std::int64_t reductions() const { return reductions_; }
  // true (default): bucket all-reduces run on the communication thread, overlapping backward.
  void set_communication_overlap(bool enabled) { overlap_ = enabled; }
  bool communication_overlap() const { return overlap_; }
  // The thread that ran the latest bucket all-reduce (the communication thread's id when
  // overlapping), so a test can see the work really left the main thread.
  std::thread::id last_reduction_thread() const { return last_reduction_thread_; }

 private:
  struct Bucket {
    std::vector<std::size_t> parameter_indices;
    std::size_t pending = 0;  // gradients still to arrive in this backward
    bool launched = false;    // its all-reduce was started in this backward
    Tensor flat;              // the bucket's gradients back to back, all-reduced as one
    // On a GPU (NCCL): the queued average, waited for — and the gradients written back —
    // only once backward has queued all its kernels (wait_for_reductions).
    std::unique_ptr<Work> work;
  };
  // The post-accumulate-grad hook of parameter `index`. It holds the DDP object weakly
  // (`owner` expires with it) and is recognised by type when the destructor removes it.
  struct GradientReadyHook {
    std::weak_ptr<DistributedDataParallel*> owner;
    std::size_t index;
    void operator()(const Tensor& leaf) const;
  };
  void on_gradient_ready(std::size_t parameter_index);
  void flatten(Bucket& bucket);
  void reduce_and_unflatten(Bucket& bucket);  // runs on the communication thread when overlapping
  void unflatten(Bucket& bucket);             // the averaged buffer back into each .grad
  void wait_for_reductions();
  void finish_backward();  // every bucket launched and reduced: ready for the next one
  // Called by forward: repairs what an incomplete backward left behind (see the file comment).
  void recover_from_incomplete_backward();

  std::shared_ptr<nn::Module> module_;
  ProcessGroup* group_;
  std::vector<Tensor> parameters_;
  std::vector<std::string> parameter_names_;
  std::vector<char> gradient_arrived_;  // per parameter, in the current backward
  std::vector<std::size_t> bucket_of_parameter_;
  std::vector<Bucket> buckets_;
  bool sync_enabled_ = true;
  bool overlap_ = true;
  bool backward_failed_ = false;  // an all-reduce failed in the current backward (and was rethrown)
  std::int64_t reductions_ = 0;
  std::size_t buckets_launched_ = 0;  // in the current backward
  std::vector<std::future<void>> in_flight_;
  std::thread::id last_reduction_thread_;
  // The latest forward's output node, kept until its backward completes (see the file comment).
  std::shared_ptr<GradFn> pending_graph_root_;
  std::shared_ptr<DistributedDataParallel*> hook_owner_;  // what the hooks' weak handles point to
  // Last member: destroyed first, so its thread finishes before the buckets it uses go.
  std::unique_ptr<CommunicationThread> communication_;
};

using DDP = DistributedDataParallel;

}  // namespace ember::distributed
