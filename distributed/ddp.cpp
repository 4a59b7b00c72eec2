// distributed/ddp.cpp — DistributedDataParallel's buckets and gradient hooks (see ddp.h).
//
// Life of one backward:
//   AccumulateGrad of parameter p finishes -> p's post-accumulate hook -> on_gradient_ready(p)
//   -> its bucket's `pending` drops by one -> at zero: flatten the bucket's gradients into
//   its buffer (main thread), then queue "all_reduce(SUM), divide by world size, copy back"
//   on the communication thread and return to autograd at once. When the last bucket has
//   been queued, wait for all of them: backward() returns with averaged gradients.
// AccumulateGrad nodes have the engine's highest priority (autograd/accumulate_grad.h), so
// a bucket's all-reduce starts as soon as its last gradient exists, not when backward ends.
// Why flatten on the main thread: a .grad is written by autograd until its hook has run
// and never again in that backward, so after the hook the communication thread may own it.
// One all-reduce per bucket instead of one per parameter: fewer, larger messages, which is
// what makes PyTorch's DDP fast on real networks.
// On GPUs (NCCL) the communication thread only queues each bucket's average (ncclAvg: the
// division happens on NCCL's stream) with an event of its own (all_reduce_async), and
// ember's stream waits on those events only in wait_for_reductions, where the gradients
// are written back: the rest of backward's kernels run while the buckets are reduced.
// (A blocking all_reduce would make ember's stream wait at once, serialising the two.)
//
// When a backward does not complete (an exception, or a parameter that never gets a
// gradient), the buckets are left half filled; the next forward repairs them
// (recover_from_incomplete_backward) and tells the two causes apart by walking the graph of
// the forward that backward started from.
#include <ember/distributed/ddp.h>

#include <algorithm>
#include <unordered_set>

#include <ember/autograd/accumulate_grad.h>
#include <ember/autograd/grad_mode.h>
#include <ember/core/autograd_meta.h>
#include <ember/core/factories.h>
#include <ember/core/profiler.h>

namespace ember::distributed {

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module, ProcessGroup* group,
                                                 double bucket_cap_mb)
    : module_(std::move(module)), group_(group != nullptr ? group : &default_group()) {
  EMBER_CHECK(module_ != nullptr, ValueError, "DistributedDataParallel: module is null");
  EMBER_CHECK(bucket_cap_mb > 0, ValueError, "DistributedDataParallel: bucket_cap_mb must be positive, got ",
              bucket_cap_mb);
  register_module("module", module_);  // so state_dict() keys read "module.xxx", as PyTorch's

  // 1. Same start everywhere: rank 0's parameters and buffers win.
  {
    NoGradGuard no_grad;
    for (Tensor tensor : module_->parameters()) group_->broadcast(tensor, 0);
    for (Tensor tensor : module_->buffers()) group_->broadcast(tensor, 0);
  }

  // 2. Buckets in reverse registration order, each up to bucket_cap_mb bytes (a parameter
  // larger than the cap gets a bucket of its own).
  for (const auto& [name, parameter] : module_->named_parameters()) {
    if (!parameter.requires_grad()) continue;
    parameters_.push_back(parameter);
    parameter_names_.push_back(name);
  }
  gradient_arrived_.assign(parameters_.size(), 0);
  const double cap_bytes = bucket_cap_mb * 1024.0 * 1024.0;
  bucket_of_parameter_.assign(parameters_.size(), 0);
  double bucket_bytes = 0;
  for (std::size_t i = parameters_.size(); i-- > 0;) {
    const double bytes = static_cast<double>(parameters_[i].numel()) * static_cast<double>(parameters_[i].element_size());
    // Every parameter shares its bucket's dtype, because a bucket is one flat buffer.
    bool fits = !buckets_.empty() && bucket_bytes + bytes <= cap_bytes &&
                parameters_[buckets_.back().parameter_indices.front()].dtype() == parameters_[i].dtype();
    if (!fits) {
      buckets_.push_back({});
      bucket_bytes = 0;
    }
    buckets_.back().parameter_indices.push_back(i);
    bucket_bytes += bytes;
    bucket_of_parameter_[i] = buckets_.size() - 1;
  }
  for (auto& bucket : buckets_) {
    bucket.pending = bucket.parameter_indices.size();
    std::int64_t total = 0;
    for (std::size_t index : bucket.parameter_indices) total += parameters_[index].numel();
    bucket.flat = empty({total}, parameters_[bucket.parameter_indices.front()].options());
  }
  communication_ = std::make_unique<CommunicationThread>();

  // 3. The hooks, holding this object weakly (GradientReadyHook).
  hook_owner_ = std::make_shared<DistributedDataParallel*>(this);
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i].register_post_accumulate_grad_hook(GradientReadyHook{hook_owner_, i});
}

DistributedDataParallel::~DistributedDataParallel() {
  // Take this object's hooks off the parameters: the module may live on (trained alone, or
  // wrapped again) and must not keep one dead hook per DDP it ever had.
  for (const Tensor& parameter : parameters_) {
    AutogradMeta* meta = parameter.autograd_meta();
    if (meta == nullptr) continue;
    std::erase_if(meta->post_accumulate_hooks, [this](const PostAccumulateGradHook& hook) {
      const auto* ours = hook.target<GradientReadyHook>();
      return ours != nullptr && ours->owner.lock() == hook_owner_;
    });
  }
  hook_owner_.reset();  // and any copy of a hook that escaped expires with it
  // Work still queued (after an interrupted backward) finishes before the buckets go.
  communication_.reset();
}

void DistributedDataParallel::GradientReadyHook::operator()(const Tensor&) const {
  if (auto ddp = owner.lock()) (*ddp)->on_gradient_ready(index);
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  recover_from_incomplete_backward();
  Tensor output = module_->forward(input);
  // Kept until the backward through it completes (finish_backward), so that an incomplete
  // backward can be diagnosed at the next forward.
  pending_graph_root_ = output.defined() ? output.grad_fn() : nullptr;
  return output;
}

std::vector<std::vector<std::size_t>> DistributedDataParallel::bucket_layout() const {
  std::vector<std::vector<std::size_t>> layout;
  for (const auto& bucket : buckets_) layout.push_back(bucket.parameter_indices);
  return layout;
}

void DistributedDataParallel::on_gradient_ready(std::size_t parameter_index) {
  if (!sync_enabled_) return;  // inside no_sync(): accumulate locally only
  if (gradient_arrived_[parameter_index]) return;  // a second gradient in one backward: already counted
  gradient_arrived_[parameter_index] = 1;
  Bucket& bucket = buckets_[bucket_of_parameter_[parameter_index]];
  if (--bucket.pending > 0) return;
  flatten(bucket);
  bucket.launched = true;
  ++buckets_launched_;
  try {
    if (overlap_) in_flight_.push_back(communication_->submit([this, &bucket] { reduce_and_unflatten(bucket); }));
    else reduce_and_unflatten(bucket);
    if (buckets_launched_ == buckets_.size()) {
      wait_for_reductions();
      finish_backward();
    }
  } catch (...) {
    // The exception leaves through autograd and ends this backward; the next forward
    // cleans up (recover_from_incomplete_backward) without blaming unused parameters.
    backward_failed_ = true;
    throw;
  }
}

void DistributedDataParallel::flatten(Bucket& bucket) {
  NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (std::size_t index : bucket.parameter_indices) {
    const Tensor& parameter = parameters_[index];
    bucket.flat.narrow(0, offset, parameter.numel()).copy_(parameter.grad().reshape({parameter.numel()}));
    offset += parameter.numel();
  }
}

void DistributedDataParallel::reduce_and_unflatten(Bucket& bucket) {
  NoGradGuard no_grad;  // grad mode is per thread: this thread needs its own guard
  EMBER_RECORD_FUNCTION("DDP.all_reduce", bucket.flat);  // the bucket's bytes: GB/s in the table
  bucket.work = group_->all_reduce_async(bucket.flat, ReduceOp::Avg);  // nullptr on Gloo
  if (!bucket.work) {  // the blocking form (Gloo): reduce, average and write back now
    group_->all_reduce(bucket.flat, ReduceOp::Sum);
    bucket.flat.div_(Scalar(static_cast<double>(group_->size())));
    unflatten(bucket);
  }
  last_reduction_thread_ = std::this_thread::get_id();
  ++reductions_;
}

void DistributedDataParallel::unflatten(Bucket& bucket) {
  NoGradGuard no_grad;
  // In place: optimizers hold these very tensors.
  std::int64_t offset = 0;
  for (std::size_t index : bucket.parameter_indices) {
    Tensor parameter = parameters_[index];
    parameter.mutable_grad().copy_(bucket.flat.narrow(0, offset, parameter.numel()).view(parameter.sizes()));
    offset += parameter.numel();
  }
}

void DistributedDataParallel::wait_for_reductions() {
  // Wait for every bucket, even after a failure, so none is still writing when we throw.
  std::exception_ptr first_error;
  for (auto& work : in_flight_) {
    try {
      work.get();
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  in_flight_.clear();
  // Queued GPU reductions: ember's stream waits for each bucket's event here, just before
  // its gradients are consumed (written back into .grad), and not earlier.
  for (auto& bucket : buckets_) {
    if (!bucket.work) continue;
    try {
      bucket.work->wait();
      unflatten(bucket);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
    bucket.work.reset();
  }
  if (first_error) std::rethrow_exception(first_error);
}

void DistributedDataParallel::finish_backward() {
  for (auto& bucket : buckets_) {
    bucket.pending = bucket.parameter_indices.size();
    bucket.launched = false;
  }
  std::fill(gradient_arrived_.begin(), gradient_arrived_.end(), 0);
  buckets_launched_ = 0;
  backward_failed_ = false;
  pending_graph_root_.reset();  // this graph was reduced completely: nothing to diagnose
}

void DistributedDataParallel::recover_from_incomplete_backward() {
  const bool incomplete = buckets_launched_ > 0 || !in_flight_.empty() ||
                          std::any_of(gradient_arrived_.begin(), gradient_arrived_.end(), [](char c) { return c != 0; });
  if (!incomplete) {
    backward_failed_ = false;
    return;
  }
  // 1. No bucket may still be in flight: its thread writes into .grad tensors.
  try {
    wait_for_reductions();
  } catch (...) {
    // Already reported (or about to be, below): the point here is only that it is over.
  }
  // 2. Which parameters got no gradient, and were they reachable from the graph?
  std::vector<std::size_t> missing;
  for (const auto& bucket : buckets_) {
    if (bucket.launched) continue;
    for (std::size_t index : bucket.parameter_indices)
      if (!gradient_arrived_[index]) missing.push_back(index);
  }
  std::unordered_set<const TensorImpl*> reachable;
  if (!backward_failed_ && pending_graph_root_ != nullptr) {
    std::vector<autograd::Node*> stack;
    if (auto* root = dynamic_cast<autograd::Node*>(pending_graph_root_.get())) stack.push_back(root);
    std::unordered_set<autograd::Node*> seen(stack.begin(), stack.end());
    while (!stack.empty()) {
      autograd::Node* node = stack.back();
      stack.pop_back();
      if (auto* accumulator = dynamic_cast<autograd::AccumulateGrad*>(node)) {
        if (Tensor leaf = accumulator->leaf(); leaf.defined()) reachable.insert(leaf.impl_ptr().get());
      }
      for (const autograd::Edge& edge : node->next_edges())
        if (edge.is_valid() && seen.insert(edge.node.get()).second) stack.push_back(edge.node.get());
    }
  }
  std::string unused;
  if (!backward_failed_) {
    for (std::size_t index : missing) {
      if (reachable.count(parameters_[index].impl_ptr().get()) == 0)
        unused += (unused.empty() ? "" : ", ") + parameter_names_[index];
    }
  }
  // 3. Clean buckets either way, so that this forward (or the next one) can proceed.
  finish_backward();
  // An exception cut the backward short (every parameter without a gradient was reachable,
  // or DDP's own all-reduce failed): the user has seen that exception; carry on. A
  // parameter the graph does not reach is unused, which DDP does not support: its replicas
  // would drift apart silently, so say so (PyTorch: "Expected to have finished reduction
  // in the prior iteration ...").
  EMBER_CHECK(unused.empty(), DistributedError,
              "DistributedDataParallel: the previous backward did not produce gradients for every parameter "
              "(unused parameters are not supported); parameters without a gradient: ",
              unused, ". Gradients were not synchronized.");
}

}  // namespace ember::distributed
