"""tests/reference/gen_model_spec_repr.py — PyTorch's repr of the models of the `ember train
--model spec:FILE` fixtures (tests/apps/fixtures/cli/specs/*.json), for test_cli_model_spec.cpp.

Each spec is a list of torch.nn module names and keyword arguments. As ember does, the sizes a
layer leaves out are taken from the layer before (in_features, in_channels, num_features,
normalized_shape: here from a forward pass of a dummy batch), and the last Linear's
out_features is the class count.
The fixtures are run on the IDX fixture: 1x4x4 images (an input of flat features when the first
layer does not take images), 3 classes.

Run: /work/venv/bin/python tests/reference/gen_model_spec_repr.py  (writes model_spec_repr.json).
"""
import json
import os

import torch

from reflib import HERE, write

SPECS = os.path.join(HERE, "..", "apps", "fixtures", "cli", "specs")
IMAGE_LAYERS = {"Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm2d"}
INPUT_SIZE = {"Linear": "in_features", "Conv2d": "in_channels", "BatchNorm1d": "num_features",
              "BatchNorm2d": "num_features", "LayerNorm": "normalized_shape"}
CLASSES = 3


def build(spec):
    x = torch.zeros(2, 1, 4, 4) if spec[0]["type"] in IMAGE_LAYERS else torch.zeros(2, 16)
    last_linear = max(i for i, layer in enumerate(spec) if layer["type"] == "Linear")
    layers = []
    for index, layer in enumerate(spec):
        args = {k: v for k, v in layer.items() if k != "type"}
        args = {k: tuple(v) if isinstance(v, list) else v for k, v in args.items()}
        key = INPUT_SIZE.get(layer["type"])
        if key is not None and key not in args:
            args[key] = x.shape[-1] if layer["type"] in ("Linear", "LayerNorm") else x.shape[1]
        if index == last_linear and "out_features" not in args:
            args["out_features"] = CLASSES
        module = getattr(torch.nn, layer["type"])(**args)
        module.eval()
        x = module(x)
        layers.append(module)
    return torch.nn.Sequential(*layers)


out = {}
for name in sorted(os.listdir(SPECS)):
    with open(os.path.join(SPECS, name)) as f:
        out[name] = repr(build(json.load(f)))
write("model_spec_repr.json", out)
