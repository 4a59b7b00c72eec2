// data/data.h — umbrella header of the data layer (included by <ember/ember.h>).
//
// Tutorial §6: Dataset / TensorDataset, samplers, the DataLoader (batching, shuffling,
// worker threads), and readers for IDX (MNIST-style) and CSV files.
#pragma once

#include <ember/data/collate.h>
#include <ember/data/csv_reader.h>
#include <ember/data/dataloader.h>
#include <ember/data/dataset.h>
#include <ember/data/idx_reader.h>
#include <ember/data/sampler.h>
#include <ember/data/text_corpus.h>
