// autograd/accumulate_grad.h — the node that ends every path: it adds a gradient into a
// leaf's .grad().
//
// Tutorial §4: after loss.backward(), w1.grad holds d loss / d w1. Each leaf that requires
// grad gets one AccumulateGrad node, created the first time an op uses the leaf and shared
// by every later graph (the leaf's AutogradMeta keeps a weak pointer to it), so gradients
// from several backward calls add up — which is why training loops call zero_grad().
//
// Priority: the engine runs the ready node with the largest sequence number first, and an
// AccumulateGrad has the largest possible one (Node::kAccumulateGradSequenceNr, PyTorch's
// UINT64_MAX). Its creation order would be wrong: the node is shared by every graph the
// leaf takes part in, so one created in an earlier iteration (kept alive by an old graph
// someone still holds) would carry a small number and wait behind every other ready node,
// until the very end of backward — and with it the post-accumulate-grad hooks through which
// DistributedDataParallel starts all-reducing a bucket while backward goes on (§9.3).
//
// The node holds the leaf weakly. With create_graph, leaf.grad() carries a graph that ends
// in this very node, so a strong handle would be a reference cycle (leaf -> grad -> graph ->
// AccumulateGrad -> leaf) and neither would ever be freed. PyTorch holds the leaf strongly and
// warns about that leak; ember follows PyTorch's behaviour otherwise but drops the cycle: a
// leaf that nobody holds any more has no .grad() anyone could read, so accumulation is skipped.
#pragma once

#include <memory>

#include <ember/autograd/node.h>

namespace ember::autograd {

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  // Runs the leaf's hooks, adds the gradient into leaf.grad(), then runs the leaf's
  // post-accumulate-grad hooks. Returns nothing (a leaf has no inputs).
  TensorList apply(const TensorList& grad_outputs) override;
  // A leaf's hooks (Tensor::register_hook) live in its AutogradMeta; they run here.
  void run_pre_hooks(TensorList& grads) override;
  // The leaf, or an undefined tensor once the leaf has been destroyed.
  Tensor leaf() const { return Tensor(leaf_.lock()); }

 private:
  std::weak_ptr<TensorImpl> leaf_;
};

// The leaf's accumulator, created on first use.
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);

}  // namespace ember::autograd
