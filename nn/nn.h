// nn/nn.h — umbrella header of the nn layer (included by <ember/ember.h>).
//
// Tutorial §5–§8: modules (nn::Module, Linear, Conv2d, MaxPool2d, ReLU, Embedding, Sequential, ...), the functional
// losses (namespace F = ember::nn::functional), initialisers (nn::init), optimizers
// (ember::optim::SGD, Adam, AdamW) and safetensors checkpoints (ember::save / ember::load).
#pragma once

#include <ember/nn/activation.h>
#include <ember/nn/adam.h>
#include <ember/nn/attention.h>
#include <ember/nn/batch_norm.h>
#include <ember/nn/clip_grad.h>
#include <ember/nn/conv.h>
#include <ember/nn/dropout.h>
#include <ember/nn/embedding.h>
#include <ember/nn/functional.h>
#include <ember/nn/init.h>
#include <ember/nn/layer_norm.h>
#include <ember/nn/linear.h>
#include <ember/nn/lr_one_cycle.h>
#include <ember/nn/lr_plateau.h>
#include <ember/nn/lr_scheduler.h>
#include <ember/nn/module.h>
#include <ember/nn/module_list.h>
#include <ember/nn/gpt.h>
#include <ember/nn/grad_scaler.h>
#include <ember/nn/optimizer.h>
#include <ember/nn/parameter.h>
#include <ember/nn/pooling.h>
#include <ember/nn/sequential.h>
#include <ember/nn/serialize.h>
#include <ember/nn/sgd.h>
#include <ember/nn/shape_layers.h>
