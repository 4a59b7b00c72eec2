#!/usr/bin/env python3
"""benchmarks/plot.py -- charts from an ember-bench JSON report (issue 9).

    build/bin/ember-bench --json bench.json
    python3 benchmarks/plot.py bench.json --out docs/images --format png

Writes, for each format asked for:
  bench_gemm.*        GFLOP/s against matrix size (square GEMM), one line per device and
                      implementation (ember, OpenBLAS, cuBLAS, PyTorch);
  bench_bandwidth.*   GB/s against element count for the streaming ops and copies;
  bench_training.*    training throughput (examples/s) against batch size, one panel per
                      model (the MLPs and the CNN), for a training step and for an epoch;
  bench_roofline.*    ember's GEMM, convolution and attention figures by arithmetic intensity
                      under the CPU's roof (computed fp32 peak, measured copy bandwidth);
  bench_ratios_<group>.*  bars, one chart per group: ember's rate over each *peer's* (another
                      library doing the same work: PyTorch; OpenBLAS/cuBLAS for a GEMM);
  bench_ceiling_<family>.*  bars, one chart per family (training, conv2d, attention, dataloader,
                      memory_bound: the bandwidth-bound ops): ember's rate as a percentage of its
                      *ceiling* (a bound it cannot exceed: the training step's GEMMs alone in
                      OpenBLAS, a memcpy of the same bytes, the device's computed peak), with the
                      100 % bound drawn dashed;
  bench_speedup.*     bars: GPU-over-CPU speedup per figure (only when the report has a GPU).
A ceiling is never drawn as a competitor: in the line charts it is a grey dashed line named
"ceiling: ...", and the ratio charts leave it out. Every chart names its units and the machine.
With --markdown FILE it also writes the figures as Markdown tables (docs/benchmarks.md);
--no-charts skips the charts. Charts need matplotlib (Debian: python3-matplotlib); nothing else.
"""
import argparse
import collections
import json
import os
import sys

plt = None  # matplotlib.pyplot, imported only when charts are drawn (--markdown alone needs none)


def import_matplotlib():
    global plt
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot
    except ImportError:
        sys.exit("plot.py needs matplotlib for charts (Debian: apt-get install python3-matplotlib)")
    plt = matplotlib.pyplot

STYLE = {"ember": "-o", "openblas": "--s", "cublas": "--s", "pytorch": ":^", "memcpy": "-.", "cuda_memcpy": "-."}


# The implementations that stand for a bound in a group rather than for another library doing
# the same work (benchmarks/ember_bench/report.cpp sets ember's fraction_of_ceiling from them).
CEILINGS = {
    "train_step": ("openblas", "cublas"),    # the step's GEMMs alone
    "train_epoch": ("openblas", "cublas"),   # the epoch's GEMMs alone
    "conv2d": ("openblas", "cublas"),        # the convolution's im2col GEMMs alone
    "attention": ("fp32_peak",),             # the figure's FLOPs at the device's peak
    "dataloader": ("memcpy",),               # the shuffled gather of the same rows
    "elementwise": ("memcpy", "cuda_memcpy"),
    "reduction": ("memcpy", "cuda_memcpy"),
}


def measured(results):
    return [r for r in results if r.get("skipped") is None and r.get("rate") is not None]


def series(records, key=lambda r: (r["device"], r["implementation"])):
    """Groups records into lines: key -> sorted [(size, rate)]."""
    lines = collections.defaultdict(list)
    for r in records:
        lines[key(r)].append((r["size"], r["rate"]))
    return {k: sorted(v) for k, v in sorted(lines.items())}


def title(report, text):
    machine = report["machine"]
    gpus = ", ".join(g["name"] for g in machine.get("gpus", [])) or "no GPU"
    return "%s\n%s (%s cores), %s -- %s" % (text, machine["cpu_model"], machine["cpu_cores"], gpus, report["date"][:10])


def save(figure, out, name, formats):
    paths = []
    for fmt in formats:
        path = os.path.join(out, "%s.%s" % (name, fmt))
        figure.savefig(path, dpi=90, bbox_inches="tight")
        paths.append(path)
    plt.close(figure)
    print("wrote " + ", ".join(paths))


def plot_lines(ax, lines, xlabel, ylabel, ceilings=()):
    """`ceilings`: the implementations drawn as bounds (grey, dashed, no markers)."""
    for (device, implementation), points in lines.items():
        xs, ys = zip(*points)
        if implementation in ceilings:
            ax.plot(xs, ys, "--", color="grey", linewidth=1.2, label="ceiling: %s %s" % (implementation, device))
            continue
        ax.plot(xs, ys, STYLE.get(implementation, "-x"), label="%s %s" % (implementation, device), markersize=4)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def plot_gemm(report, records, out, formats):
    square = [r for r in records if r["id"].startswith("gemm/square/")]
    if not square:
        return
    figure, ax = plt.subplots(figsize=(7, 4.5))
    plot_lines(ax, series(square), "matrix size n (n x n times n x n)", "GFLOP/s")
    ax.set_title(title(report, "fp32 GEMM"), fontsize=9)
    save(figure, out, "bench_gemm", formats)


def plot_bandwidth(report, records, out, formats):
    groups = [("elementwise", "add"), ("elementwise", "relu"), ("reduction", "sum"), ("copy", "clone")]
    present = [(g, op) for g, op in groups if any(r["group"] == g and r["op"] == op for r in records)]
    if not present:
        return
    figure, axes = plt.subplots(1, len(present), figsize=(4 * len(present), 4), squeeze=False)
    for ax, (group, op) in zip(axes[0], present):
        chosen = [r for r in records if r["group"] == group and r["op"] == op]
        plot_lines(ax, series(chosen), "elements", "GB/s", CEILINGS.get(group, ()))
        ax.set_title("%s %s" % (group, op), fontsize=9)
    figure.suptitle(title(report, "memory-bound ops (minimum bytes moved / time)"), fontsize=9)
    save(figure, out, "bench_bandwidth", formats)


def plot_training(report, records, out, formats):
    models = [m for m in ("toy", "fmnist", "wide", "cnn") if any(r.get("model") == m and r["group"].startswith("train")
                                                            for r in records)]
    if not models:
        return
    kinds = [k for k in ("train_step", "train_epoch") if any(r["group"] == k for r in records)]
    figure, axes = plt.subplots(len(kinds), len(models), figsize=(4.2 * len(models), 3.6 * len(kinds)), squeeze=False)
    for row, kind in enumerate(kinds):
        for column, model in enumerate(models):
            chosen = [r for r in records if r["group"] == kind and r.get("model") == model]
            ax = axes[row][column]
            if chosen:
                plot_lines(ax, series(chosen), "batch size", "examples/s", CEILINGS[kind])
            if model == "cnn":  # two Conv2d/ReLU/MaxPool2d stages, then the Linear head
                description = "CNN conv%d-conv%d-%s" % (chosen[0]["dims"][3], chosen[0]["dims"][4], "-".join(
                    str(x) for x in chosen[0]["layers"])) if chosen else "CNN"
            else:
                description = "%s MLP %s" % (model, "-".join(str(x) for x in chosen[0]["layers"]) if chosen else "")
            ax.set_title("%s, %s" % (kind.replace("_", " "), description), fontsize=9)
    figure.suptitle(title(report, "training throughput (synthetic data of the right shape)"), fontsize=9)
    figure.tight_layout()
    save(figure, out, "bench_training", formats)


def roofline_series(report, records):
    """What the roofline chart draws, without drawing it: the roofs and the points under each.

    A figure is placed by arithmetic intensity (FLOPs per byte of its minimal traffic,
    work_per_call) under the roof of its own precision: float32 figures under the computed fp32
    peak, bfloat16 ones under the computed bfloat16 peak (machine.cpu_bf16_peak_gflops: AMX
    tiles or vdpbf16ps), never a bfloat16 point under the fp32 roof, where it would seem to
    break a ceiling. A precision whose peak the report lacks is left off the chart. The slope
    is the largest copy measured (the one least served from cache), by ember or memcpy.
    Returns None when there is nothing to draw, else a dict: bandwidth (GB/s), copy_size,
    roofs [(precision, peak GFLOP/s)] and points [(precision, group, intensity, GFLOP/s, id)]."""
    machine = report.get("machine", {})
    peaks = {"fp32": machine.get("cpu_fp32_peak_gflops"), "bf16": machine.get("cpu_bf16_peak_gflops")}
    peaks = {precision: float(peak) for precision, peak in peaks.items() if peak}
    copies = [r for r in records if r["group"] == "copy" and r["device"] == "cpu" and r["unit"] == "GB/s"]
    largest = max((r["size"] for r in copies), default=None)
    copy_rates = [r["rate"] for r in copies if r["size"] == largest]
    points = []
    for r in records:
        if r["implementation"] != "ember" or r["device"] != "cpu" or not r.get("gflops"):
            continue
        work = r["work_per_call"]
        # Reports written before 2026-12-06 labelled the gemm_bf16 figures "fp32".
        precision = "bf16" if r["group"] == "gemm_bf16" else (r.get("precision") or "fp32")
        if work["flops"] <= 0 or work["bytes"] <= 0 or precision not in peaks:
            continue
        points.append((precision, r["group"], work["flops"] / work["bytes"], r["gflops"], r["id"]))
    if "fp32" not in peaks or not copy_rates or not points:
        return None
    roofs = [(precision, peaks[precision]) for precision in ("fp32", "bf16")
             if any(p[0] == precision for p in points)]
    return {"bandwidth": max(copy_rates), "copy_size": largest, "roofs": roofs, "points": points}


def plot_roofline(report, records, out, formats):
    """ember's figures that do both arithmetic and memory traffic (GEMMs, convolutions,
    attention, and the training steps and epochs, whose bytes are ember-bench's model of a
    step's minimum traffic: benchmarks/ember_bench/workloads.cpp, step_bytes) against the CPU's
    roofline (roofline_series): each computed peak flat, the measured copy bandwidth the slope.
    A point can only lie under its roof."""
    series = roofline_series(report, records)
    if series is None:
        return False
    bandwidth, points = series["bandwidth"], series["points"]
    intensities = [p[2] for p in points] + [peak / bandwidth for _, peak in series["roofs"]]
    low, high = min(intensities) / 4, max(intensities) * 4
    figure, ax = plt.subplots(figsize=(7.5, 5))
    xs = [low * (high / low) ** (i / 200) for i in range(201)]
    names = {"fp32": "fp32", "bf16": "bfloat16"}
    styles = {"fp32": ("--", "grey"), "bf16": (":", "dimgrey")}
    for precision, peak in series["roofs"]:
        line, colour = styles[precision]
        ax.plot(xs, [min(peak, bandwidth * x) for x in xs], line, color=colour, linewidth=1.3,
                label="roof: %s peak %.0f GFLOP/s (computed), copy %.0f GB/s (measured, %s elements)"
                % (names[precision], peak, bandwidth, "{:,}".format(int(series["copy_size"]))))
    markers = {"gemm": "o", "gemm_bf16": "o", "conv2d": "s", "attention": "^", "train_step": "D", "train_epoch": "v"}
    for precision in ("fp32", "bf16"):
        for group in sorted({p[1] for p in points if p[0] == precision}):
            chosen = [p for p in points if p[0] == precision and p[1] == group]
            label = "ember %s" % group if precision == "fp32" else "ember %s (bfloat16)" % group.replace("_bf16", "")
            ax.plot([p[2] for p in chosen], [p[3] for p in chosen], markers.get(group, "x"), linestyle="none",
                    label=label, markersize=5, fillstyle="full" if precision == "fp32" else "none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    # Room below the lowest point for the legend, so that it hides none.
    ax.set_ylim(bottom=min(p[3] for p in points) / 4, top=max(peak for _, peak in series["roofs"]) * 1.6)
    ax.set_xlabel("arithmetic intensity (FLOPs per byte of minimal memory traffic)")
    ax.set_ylabel("GFLOP/s achieved")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title(report, "roofline, CPU (%s threads)" % report.get("options", {}).get("threads", "?")), fontsize=9)
    save(figure, out, "bench_roofline", formats)
    return True


def is_headline(r, records):
    """The figures the bar charts show by default, so that a full run stays readable."""
    group = r["group"]
    if group in ("elementwise", "reduction", "copy", "h2d", "d2h"):
        sizes = [o["size"] for o in records if o["group"] == group and o["op"] == r["op"] and o["device"] == r["device"]
                 and o["implementation"] == "ember"]
        return r["size"] == max(sizes)
    if group in ("train_step", "train_epoch"):
        return r["batch"] in (32, 256, 4096) or r.get("model") == "cnn"
    return True


def plot_bars(report, labels, values, out, name, formats, text, xlabel):
    """Ratios to peers: green where ember is faster, red where slower, log scale around 1."""
    if not labels:
        return False
    figure, ax = plt.subplots(figsize=(8, max(3, 0.22 * len(labels) + 1)))
    positions = range(len(labels))
    ax.barh(positions, values, color=["tab:green" if v >= 1 else "tab:red" for v in values])
    ax.set_yticks(list(positions))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel(xlabel)
    ax.set_title(title(report, text), fontsize=9)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    save(figure, out, name, formats)
    return True


def plot_ceiling_fractions(report, group, chosen, out, formats):
    """ember as a percentage of its ceiling in one family of groups: one neutral colour, the bound a dashed
    line at 100 %. A figure above 130 % (a ceiling measured badly: noise) is cut at the edge and
    says its value."""
    labels = ["%s %s" % (r["id"], r["device"]) for r in chosen]
    values = [100 * r["fraction_of_ceiling"] for r in chosen]
    edge = 130.0
    figure, ax = plt.subplots(figsize=(8, max(2.5, 0.3 * len(labels) + 1.2)))
    positions = range(len(labels))
    ax.barh(positions, [min(v, edge) for v in values], color="tab:blue")
    for position, value, r in zip(positions, values, chosen):
        text = "%.0f%% of %s" % (value, r["ceiling"]) + (" (cut at the edge)" if value > edge else "")
        ax.text(min(value, edge) + 1, position, text, va="center", fontsize=6)
    ax.set_yticks(list(positions))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(100, color="grey", linestyle="--", linewidth=1.2, label="the ceiling (100 %)")
    ax.set_xlim(0, edge + 70)
    ax.set_xlabel("ember's rate as a % of its ceiling (a bound, not a competitor)")
    ax.set_title(title(report, "%s: how close ember comes to each figure's ceiling" % group), fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, axis="x", alpha=0.3)
    save(figure, out, "bench_ceiling_" + group, formats)


def format_rate(rate, unit):
    if rate is None:
        return "-"
    if unit == "examples/s":
        return "%.0fK ex/s" % (rate / 1e3) if rate >= 1e4 else "%.0f ex/s" % rate
    return "%.1f %s" % (rate, unit)


def write_markdown(report, path, source):
    """One table per group, one row per (figure, device): ember, the library peer, PyTorch."""
    rows = collections.OrderedDict()
    for r in report["results"]:
        rows.setdefault((r["group"], r["id"], r["device"]), {})[r["implementation"]] = r
    lines = ["<!-- written by benchmarks/plot.py --markdown from %s -->" % os.path.basename(source), ""]
    group = None
    for (g, figure, device), impls in rows.items():
        if g != group:
            group = g
            lines += ["", "#### %s" % g, "",
                      "| figure | shape | device | ember | library peer | PyTorch | ember/library | ember/PyTorch "
                      "| of ceiling | GPU/CPU |",
                      "|---|---|---|---|---|---|---|---|---|---|"]
        ember = impls.get("ember", {})
        unit = ember.get("unit") or next(iter(impls.values()))["unit"]
        library = next((impls[k] for k in ("openblas", "cublas", "memcpy", "cuda_memcpy") if k in impls), None)
        torch_record = impls.get("pytorch")
        ratios = ember.get("ratio_to_peer") or {}
        library_ratio = next((ratios[k] for k in ("openblas", "cublas", "memcpy", "cuda_memcpy") if k in ratios), None)
        fraction = ember.get("fraction_of_ceiling")
        speedup = ember.get("speedup_over_cpu")
        if ember.get("skipped"):
            ember_text = "skipped: " + ember["skipped"]
        else:
            ember_text = format_rate(ember.get("rate"), unit)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            figure, ember.get("shape", ""), device, ember_text,
            ("%s %s" % (library["implementation"], format_rate(library.get("rate"), unit))) if library else "-",
            format_rate(torch_record.get("rate"), unit) if torch_record else "-",
            "%.2f" % library_ratio if library_ratio else "-",
            "%.2f" % ratios["pytorch"] if "pytorch" in ratios else "-",
            "%.0f%%" % (100 * fraction) if fraction else "-",
            "%.1fx" % speedup if speedup else "-"))
    with open(path, "w") as handle:
        handle.write("\n".join(lines).lstrip("\n") + "\n")
    print("wrote " + path)


def main():
    parser = argparse.ArgumentParser(description="charts from an ember-bench JSON report")
    parser.add_argument("report", help="the file written by ember-bench --json")
    parser.add_argument("--out", default=".", help="folder for the charts")
    parser.add_argument("--format", default="png,svg", help="comma-separated: png, svg, pdf")
    parser.add_argument("--markdown", help="also write the figures as Markdown tables to this file")
    parser.add_argument("--all-bars", action="store_true",
                        help="bar charts for every figure (default: GEMM, the largest streaming size, batches 32/256/4096)")
    parser.add_argument("--no-charts", action="store_true", help="only the Markdown tables")
    args = parser.parse_args()
    with open(args.report) as handle:
        report = json.load(handle)
    if args.markdown:
        write_markdown(report, args.markdown, args.report)
    if args.no_charts:
        return
    import_matplotlib()
    formats = [f for f in args.format.split(",") if f]
    os.makedirs(args.out, exist_ok=True)
    records = measured(report["results"])
    plot_gemm(report, records, args.out, formats)
    plot_bandwidth(report, records, args.out, formats)
    plot_training(report, records, args.out, formats)
    if not plot_roofline(report, records, args.out, formats):
        print("no CPU peak, copy or GEMM figures in %s: bench_roofline not drawn" % args.report)
    headline = [r for r in records if r["implementation"] == "ember" and (args.all_bars or is_headline(r, records))]
    # One ratio chart per group, peers only: a ceiling is a bound, drawn in bench_ceiling.
    groups = collections.OrderedDict()
    for r in headline:
        for peer, value in sorted(r.get("ratio_to_peer", {}).items()):
            if peer in CEILINGS.get(r["group"], ()) or peer == "fp32_peak":
                continue
            groups.setdefault(r["group"], []).append(("%s %s vs %s" % (r["id"], r["device"], peer), value))
    for group, ratios in groups.items():
        plot_bars(report, [l for l, _ in ratios], [v for _, v in ratios], args.out, "bench_ratios_" + group, formats,
                  "%s: ember's rate / a peer's rate (> 1: ember faster)" % group, "ratio, log scale (rates in "
                  "%s)" % next(r["unit"] for r in headline if r["group"] == group))
    # One ceiling chart per group (GEMMs have a peer, OpenBLAS/cuBLAS, not a bound: above).
    # Families of groups, so that no chart has one bar and none has a hundred.
    family = {"train_step": "training", "train_epoch": "training", "conv2d": "conv2d", "attention": "attention",
              "dataloader": "dataloader"}
    bounded = collections.OrderedDict()
    for r in headline:
        if r["group"] != "gemm" and r.get("fraction_of_ceiling") and r.get("ceiling"):
            bounded.setdefault(family.get(r["group"], "memory_bound"), []).append(r)
    for group, chosen in bounded.items():
        plot_ceiling_fractions(report, group, chosen, args.out, formats)
    speedups = [("%s %s" % (r["id"], r["device"]), r["speedup_over_cpu"])
                for r in headline if r.get("speedup_over_cpu")]
    if not plot_bars(report, [l for l, _ in speedups], [v for _, v in speedups], args.out, "bench_speedup", formats,
                     "ember: GPU rate / CPU rate", "speedup (log scale)"):
        print("no GPU figures in %s: bench_speedup not drawn" % args.report)


if __name__ == "__main__":
    main()
