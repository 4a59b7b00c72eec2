"""tests/apps/tensorboard_reader.py — reads an `ember train --tensorboard DIR` directory with
TensorBoard's own reader and prints what it found as JSON (test_tensorboard.cpp compares it
with the run's --log).

    python3 tensorboard_reader.py DIR

Prints {"files": [names], "first_event": {"file_version": ..., "wall_time": ...},
"scalars": {tag: [[step, value], ...]}}. EventFileLoader checks both masked CRC32Cs of every
record (a mismatch raises DataLossError, and the script fails); EventAccumulator is what the
TensorBoard server uses to serve the scalar charts.
"""
import json
import os
import sys

from tensorboard.backend.event_processing import event_accumulator, event_file_loader


def main(directory):
    files = sorted(name for name in os.listdir(directory) if "tfevents" in name)
    first = None
    for name in files:
        for event in event_file_loader.EventFileLoader(os.path.join(directory, name)).Load():
            if first is None:
                first = {"file_version": event.file_version, "wall_time": event.wall_time}
    accumulator = event_accumulator.EventAccumulator(directory, size_guidance={event_accumulator.SCALARS: 0})
    accumulator.Reload()
    scalars = {tag: [[item.step, item.value] for item in accumulator.Scalars(tag)]
               for tag in accumulator.Tags()["scalars"]}
    json.dump({"files": files, "first_event": first, "scalars": scalars}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
