// autograd/autograd.h — everything of the autograd layer in one include
// (<ember/ember.h> includes it).
//
// Tutorial §3–§4: the tape (node.h), backward and grad (engine.h), no_grad
// (grad_mode.h), the differentiable ops (ops.h), gradcheck, anomaly mode and the graph
// inspector. docs/autograd.md tells the whole story.
#pragma once

#include <ember/autograd/accumulate_grad.h>
#include <ember/autograd/anomaly.h>
#include <ember/autograd/autocast.h>
#include <ember/autograd/engine.h>
#include <ember/autograd/function.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/gradcheck.h>
#include <ember/autograd/graph_inspector.h>
#include <ember/autograd/hooks.h>
#include <ember/autograd/node.h>
#include <ember/autograd/ops.h>
