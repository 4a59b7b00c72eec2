"""tests/benchmarks/test_plot_roofline.py — benchmarks/plot.py's roofline puts each figure
under the roof of its own precision (issue 23: a ceiling drawn as a ceiling). Needs only
python3 (roofline_series draws nothing, so no matplotlib). Run by ctest:
    python3 tests/benchmarks/test_plot_roofline.py benchmarks/plot.py
"""
import importlib.util
import sys


def load(path):
    spec = importlib.util.spec_from_file_location("plot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(id, group, precision, gflops, flops=1e9, bytes=1e7, implementation="ember", unit="GFLOP/s", size=0):
    return {"id": id, "group": group, "precision": precision, "gflops": gflops, "rate": gflops,
            "work_per_call": {"flops": flops, "bytes": bytes}, "implementation": implementation,
            "device": "cpu", "unit": unit, "size": size}


def main():
    plot = load(sys.argv[1])
    copies = [record("copy/clone/1M", "copy", "fp32", None, flops=0, unit="GB/s", size=1 << 20),
              record("copy/clone/256M", "copy", "fp32", None, flops=0, unit="GB/s", size=1 << 28)]
    copies[0]["rate"], copies[1]["rate"] = 180.0, 47.0  # the slope is the largest copy's, not the fastest
    figures = [record("gemm/square/1024", "gemm", "fp32", 410.0),
               record("gemm_bf16/square/1024", "gemm_bf16", "bf16", 1780.0),
               record("conv2d/cnn_conv2/b128/fwd/bf16", "conv2d", "bf16", 600.0),
               record("train_step/cnn/b128/bf16", "train_step", "bf16", 300.0, flops=8e9, bytes=1e8, unit="examples/s"),
               record("train_step/fmnist/b128", "train_step", "fp32", 250.0, flops=7e8, bytes=1.6e7, unit="examples/s"),
               record("gemm/square/1024", "gemm", "fp32", 400.0, implementation="openblas")]
    failures = []

    def check(condition, message):
        if not condition:
            failures.append(message)

    # With both peaks: every point under its own roof, the bfloat16 ones under the bfloat16 roof.
    report = {"machine": {"cpu_fp32_peak_gflops": "508.2", "cpu_bf16_peak_gflops": "8131.0"}}
    series = plot.roofline_series(report, copies + figures)
    check(series is not None, "nothing to draw with both peaks")
    check(series["bandwidth"] == 47.0, "the slope is not the largest copy's bandwidth: %r" % series["bandwidth"])
    check(series["roofs"] == [("fp32", 508.2), ("bf16", 8131.0)], "roofs: %r" % series["roofs"])
    by_id = {(p[4], p[0]): p for p in series["points"]}
    check(("gemm/square/1024", "fp32") in by_id, "the fp32 GEMM is missing")
    check(by_id.get(("gemm_bf16/square/1024", "bf16"), (None,))[0] == "bf16", "the bf16 GEMM is not under the bf16 roof")
    check(by_id.get(("conv2d/cnn_conv2/b128/fwd/bf16", "bf16"), (None,))[0] == "bf16",
          "the bf16 convolution is not under the bf16 roof")
    # Training figures are placed too (their bytes: ember-bench's model of a step's traffic),
    # each under its own precision's roof.
    check(by_id.get(("train_step/cnn/b128/bf16", "bf16"), (None,))[0] == "bf16",
          "the bf16 training step is not under the bf16 roof")
    check(abs(by_id.get(("train_step/fmnist/b128", "fp32"), (0, 0, 0))[2] - 43.75) < 1e-9,
          "the fp32 training step's intensity is not flops / bytes")
    check(len(series["points"]) == 5, "a peer's figure was placed: %r" % series["points"])
    roofs = dict(series["roofs"])
    for precision, group, intensity, gflops, id in series["points"]:
        check(gflops <= roofs[precision], "%s above its %s roof" % (id, precision))

    # Without a bfloat16 peak: the bfloat16 figures are left off, never put under the fp32 roof.
    report = {"machine": {"cpu_fp32_peak_gflops": "508.2"}}
    series = plot.roofline_series(report, copies + figures)
    check(series["roofs"] == [("fp32", 508.2)], "roofs without a bf16 peak: %r" % series["roofs"])
    check(all(p[0] == "fp32" for p in series["points"]), "a bf16 point under the fp32 roof: %r" % series["points"])

    # An older report's gemm_bf16 figures say "fp32": still bfloat16, still off the fp32 roof.
    old = [dict(r) for r in figures]
    old[1]["precision"] = "fp32"
    series = plot.roofline_series(report, copies + old)
    check(all(p[1] != "gemm_bf16" for p in series["points"]), "an old report's bf16 GEMM under the fp32 roof")

    # Without an fp32 peak or a copy figure there is no roof to draw.
    check(plot.roofline_series({"machine": {}}, copies + figures) is None, "a roofline without a peak")
    check(plot.roofline_series(report, figures) is None, "a roofline without a copy figure")

    for failure in failures:
        print("FAIL:", failure)
    if failures:
        sys.exit(1)
    print("roofline: every check passed")


if __name__ == "__main__":
    main()
