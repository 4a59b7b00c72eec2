// distributed/ddp.cpp — DistributedDataParallel's buckets and gradient hooks (see ddp.h).
//
// Life of one backward:
//   AccumulateGrad of parameter p finishes -> p's post-accumulate hook -> on_gradient_ready(p)
//   -> its bucket's `pending` drops by one -> at zero: flatten the bucket's gradients into
//   its buffer (main thread), then queue "all_reduce(SUM), divide by world size, copy back"
//   on the communication thread and return to autograd at once. When the last bucket has
//   been queued, wait for all of them: backward() returns with averaged gradients.
// Why flatten on the main thread: a .grad is written by autograd until its hook has run
// and never again in that backward, so after the hook the communication thread may own it.
// One all-reduce per bucket instead of one per parameter: fewer, larger messages, which is
// what makes PyTorch's DDP fast on real networks.
#include <ember/distributed/ddp.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/factories.h>

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
  for (const Tensor& parameter : module_->parameters())
    if (parameter.requires_grad()) parameters_.push_back(parameter);
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

  // 3. The hooks. They capture `this`: a DDP object must outlive its backward passes.
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i].register_post_accumulate_grad_hook([this, i](const Tensor&) { on_gradient_ready(i); });
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  // A bucket still waiting means the last backward skipped a parameter: its gradients were
  // never averaged, so the replicas would silently drift apart.
  if (sync_enabled_) {
    for (const auto& bucket : buckets_)
      EMBER_CHECK(bucket.pending == bucket.parameter_indices.size(), DistributedError,
                  "DistributedDataParallel: the previous backward did not produce gradients for every parameter "
                  "(unused parameters are not supported); gradients were not synchronized");
  }
  return module_->forward(input);
}

std::vector<std::vector<std::size_t>> DistributedDataParallel::bucket_layout() const {
  std::vector<std::vector<std::size_t>> layout;
  for (const auto& bucket : buckets_) layout.push_back(bucket.parameter_indices);
  return layout;
}

void DistributedDataParallel::on_gradient_ready(std::size_t parameter_index) {
  if (!sync_enabled_) return;  // inside no_sync(): accumulate locally only
  Bucket& bucket = buckets_[bucket_of_parameter_[parameter_index]];
  if (bucket.pending > 0) --bucket.pending;
  if (bucket.pending > 0) return;
  bucket.pending = bucket.parameter_indices.size();  // ready for the next backward
  flatten(bucket);
  ++buckets_launched_;
  if (overlap_) in_flight_.push_back(communication_->submit([this, &bucket] { reduce_and_unflatten(bucket); }));
  else reduce_and_unflatten(bucket);
  if (buckets_launched_ == buckets_.size()) wait_for_reductions();
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
  group_->all_reduce(bucket.flat, ReduceOp::Sum);
  bucket.flat.div_(Scalar(static_cast<double>(group_->size())));
  // Unflatten back into each .grad (in place: optimizers hold these very tensors).
  std::int64_t offset = 0;
  for (std::size_t index : bucket.parameter_indices) {
    Tensor parameter = parameters_[index];
    parameter.mutable_grad().copy_(bucket.flat.narrow(0, offset, parameter.numel()).view(parameter.sizes()));
    offset += parameter.numel();
  }
  last_reduction_thread_ = std::this_thread::get_id();
  ++reductions_;
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
  buckets_launched_ = 0;
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ember::distributed
