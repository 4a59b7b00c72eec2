// distributed/distributed.h — the distributed layer's umbrella header (tutorial §9.3).
//
// Data parallelism across processes: the rendezvous store, process groups and their
// collectives, DistributedSampler and DistributedDataParallel. Included by <ember/ember.h>.
#pragma once

#include <ember/distributed/ddp.h>
#include <ember/distributed/distributed_error.h>
#include <ember/distributed/distributed_sampler.h>
#include <ember/distributed/process_group.h>
#include <ember/distributed/process_group_gloo.h>
#ifdef EMBER_HAVE_NCCL
#include <ember/distributed/process_group_nccl.h>
#endif
#include <ember/distributed/tcp_store.h>
