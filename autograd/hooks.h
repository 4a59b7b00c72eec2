// autograd/hooks.h — what the hook types of core/tensor.h mean, and when they run.
//
// Tutorial §4 (and §A's data parallelism). Two kinds of hooks, both registered on a Tensor:
//
//   TensorHook              = std::function<Tensor(const Tensor& grad)>
//     t.register_hook(fn): during backward, fn receives the gradient w.r.t. t before it
//     is used. Returning a defined tensor replaces the gradient (clip it, scale it);
//     returning Tensor() keeps it (observe only). On a non-leaf the hook lives on its
//     grad_fn node (Node::add_pre_hook); on a leaf in its AutogradMeta, run by the leaf's
//     AccumulateGrad just before accumulation. retain_grad() is such a hook too, run after
//     the user's hooks.
//
//   PostAccumulateGradHook  = std::function<void(const Tensor& leaf)>
//     leaf.register_post_accumulate_grad_hook(fn): runs right after leaf.grad() has been
//     updated. Distributed data parallelism starts all-reducing a parameter's gradient
//     there, while backward is still computing the others.
//
// The registration functions are Tensor methods (defined in tensor_autograd.cpp); this
// header only adds the documentation and the node-level types for completeness.
#pragma once

#include <ember/autograd/node.h>
#include <ember/core/tensor.h>
