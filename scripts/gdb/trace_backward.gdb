# scripts/gdb/trace_backward.gdb — watch one backward pass of a training step (docs/debugging.md).
#
#   gdb -batch -x scripts/gdb/trace_backward.gdb build-debug/bin/tutorial_07_training
#
# Stops at the first loss.backward(), prints the loss and the tape behind it (ember-graph,
# from scripts/gdb/ember_printers.py), then lets the engine run that one backward pass
# while a dprintf at Node::apply() — called from the engine's loop in autograd/engine.cpp —
# prints each node as it runs: the order is the engine's (newest node first), and an
# AccumulateGrad line (AccumulateGrad overrides apply()) is a gradient landing in a
# leaf's .grad. Nothing here calls a function in the program (ember-grad reads .grad from
# memory), so it also works where gdb cannot make inferior calls.
# Run from the repository root (the printers are sourced by a relative path).
set pagination off
set confirm off
source scripts/gdb/ember_printers.py
break ember::Tensor::backward
run
echo \n--- the loss and its tape\n
print *this
ember-graph *this
echo \n--- the engine's loop, one line per node it runs\n
dprintf ember::autograd::Node::apply,"apply %s\n",name_._M_dataplus._M_p
dprintf ember::autograd::AccumulateGrad::apply,"apply AccumulateGrad (a %d-d gradient into a leaf's .grad)\n",(int)(grad_outputs._M_impl._M_start[0].impl_._M_ptr->sizes._M_impl._M_finish - grad_outputs._M_impl._M_start[0].impl_._M_ptr->sizes._M_impl._M_start)
finish
echo \n--- back in main after backward: the first layer's weight gradient\n
ember-grad ((ember::nn::Linear*) model->layers->modules_[0].get())->weight
kill
