// <ember/ember.h> — the one header a user program includes.
//
//   #include <ember/ember.h>
//   auto x = ember::tensor({{1, 2, 3}, {4, 5, 6}});
//   std::cout << x.matmul(x.T()) << "\n";
//
// It pulls in every layer: core (tensors, RNG, printing), autograd (backward, grad,
// NoGradGuard), nn (modules, losses, optimizers, checkpoints) and data (Dataset,
// DataLoader). Link the CMake target ember::ember.
#pragma once

#include <ember/core/tensor.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/core/sampling.h>
#include <ember/core/print.h>
#include <ember/core/profiler.h>
#include <ember/core/cuda_hooks.h>
#include <ember/autograd/autograd.h>
#include <ember/nn/nn.h>
#include <ember/data/data.h>
#include <ember/distributed/distributed.h>
