"""The benchmark suite: runs every benchmark in its own process, then writes benchmarks/results/REPORT.md
and PNG plots with the machine, library versions and date. `./run bench [--quick]`.

Every figure is a ratio measured side by side within one benchmark run, and every benchmark checks its own
results (row counts and checksums), so a fast wrong answer fails instead of being reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# name -> (script, args, quick args)
SUITE: dict[str, tuple[str, list[str], list[str]]] = {
    "core": ("bench_core.py", ["--rows", "2000000"], ["--rows", "300000"]),
    "lakes": ("bench_lakes.py", ["--rows", "1000000"], ["--rows", "200000"]),
    "scaling": ("bench_scaling.py", ["--sizes", "1000000,4000000,16000000"], ["--sizes", "200000,800000", "--batch",
                                                                             "20000"]),
    "reference": ("bench_reference.py", ["--repeat", "20"], ["--repeat", "3"]),
    "spark": ("bench_spark.py", ["--rows", "5000000"], ["--rows", "300000"]),
    "streaming": ("bench_streaming.py", [], ["--seconds", "20"]),
}

# goal: (benchmark, figure or ratio expression, comparison, target, description)
GOALS = [
    ("core", "insert_rows_s / floor_write_rows_s", ">=", 0.7, "core insert vs pyarrow floor"),
    ("core", "upsert_rows_s", ">=", 1_000_000, "core upsert rows/s"),
    ("core", "snapshot_read_rows_s", ">=", 2_500_000, "core MOR snapshot read rows/s"),
    ("lakes", "delta_upsert_s / hudi_upsert_s", ">=", 5.0, "upsert vs deltalake MERGE"),
    ("reference", "speed_vs_hudi_rs", ">=", 1.0, "reading Apache Hudi's tables vs hudi-rs"),
    ("scaling", "ratio_largest_to_smallest", "<=", 1.3, "upsert cost at 16M vs 1M rows"),
    ("spark", "bulk_insert_ratio", ">=", 0.8, "Spark bulk_insert vs built-in parquet write"),
    ("spark", "upsert_ratio", ">=", 0.6, "Spark upsert vs built-in write of the same rows"),
    ("spark", "read_ratio", ">=", 0.7, "Spark snapshot read vs built-in parquet read"),
    ("streaming", "sustained_rows_s", ">=", 300_000, "streaming ingest rows/s"),
    ("streaming", "commit_overhead_s", "<=", 0.3, "commit overhead per small batch (s)"),
]


def _versions() -> str:
    out = []
    for pkg in ("hudi-ds", "pyspark", "pyarrow", "polars", "deltalake", "hudi"):
        try:
            out.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(out)


def _machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {mem:.0f} GiB, {platform.system()} {platform.machine()}, Python {platform.python_version()}"


def run_one(name: str, quick: bool) -> tuple[dict[str, float] | None, str, float, float]:
    script, args, quick_args = SUITE[name]
    if not (HERE / script).exists():
        return None, f"{script} not present", 0.0, 0.0
    out = RESULTS / f"{name}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(HERE / script), *(quick_args if quick else args), "--json", str(out)]
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(cmd, capture_output=True, text=True)
    rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    elapsed = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    (RESULTS / f"{name}.log").write_text(log)
    if proc.returncode != 0 or not out.exists():
        return None, log[-2000:], elapsed, rss
    return json.loads(out.read_text()), proc.stdout, elapsed, rss


def _value(figures: dict[str, float], expr: str) -> float | None:
    try:
        return float(eval(expr, {}, dict(figures)))  # noqa: S307 - our own constant expressions
    except (NameError, ZeroDivisionError, KeyError):
        return None


def _plot(results: dict[str, dict[str, float]]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    if "core" in results:
        f = results["core"]
        labels = ["pyarrow write", "hudi-py insert", "hudi-py upsert", "pyarrow read", "hudi-py read"]
        keys = ["floor_write_rows_s", "insert_rows_s", "upsert_rows_s", "floor_read_rows_s", "snapshot_read_rows_s"]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.barh(labels, [f.get(k, 0) / 1e6 for k in keys], color=["#999", "#3a7", "#3a7", "#999", "#37a"])
        ax.set_xlabel("million rows / s")
        ax.set_title("hudi-py core vs pyarrow parquet")
        fig.tight_layout()
        fig.savefig(RESULTS / "core.png", dpi=110)
        made.append("core.png")
    if "scaling" in results:
        f = results["scaling"]
        sizes = sorted(int(k.rsplit("_", 1)[1]) for k in f if k.startswith("upsert_s_"))
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot([s / 1e6 for s in sizes], [f[f"upsert_s_{s}"] for s in sizes], marker="o")
        ax.set_xlabel("table size (million rows)")
        ax.set_ylabel("upsert time (s)")
        ax.set_ylim(bottom=0)
        ax.set_title("fixed-size upsert vs table size (bucket index)")
        fig.tight_layout()
        fig.savefig(RESULTS / "scaling.png", dpi=110)
        made.append("scaling.png")
    if "lakes" in results:
        f = results["lakes"]
        steps = ["load", "upsert", "delete", "read", "cdf"]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        x = range(len(steps))
        ax.bar([i - 0.2 for i in x], [f[f"hudi_{s}_s"] for s in steps], width=0.4, label="hudi-py")
        ax.bar([i + 0.2 for i in x], [f[f"delta_{s}_s"] for s in steps], width=0.4, label="deltalake")
        ax.set_xticks(list(x), steps)
        ax.set_ylabel("seconds")
        ax.legend()
        ax.set_title("hudi-py vs deltalake")
        fig.tight_layout()
        fig.savefig(RESULTS / "lakes.png", dpi=110)
        made.append("lakes.png")
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, not a measurement)")
    ap.add_argument("--only", help="comma-separated benchmark names")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=ARGS",
                    help="override one benchmark's arguments, e.g. --set 'spark=--rows 2000000'")
    args = ap.parse_args(argv)
    for item in args.set:
        name, _, extra = item.partition("=")
        script, _, quick_args = SUITE[name]
        SUITE[name] = (script, extra.split(), quick_args)
    RESULTS.mkdir(exist_ok=True)
    names = args.only.split(",") if args.only else list(SUITE)
    results: dict[str, dict[str, float]] = {}
    lines = ["# hudi-py benchmark report", "",
             f"- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}" + (" (quick smoke run)" if args.quick else ""),
             f"- machine: {_machine()}", f"- versions: {_versions()}", ""]
    sections = []
    for name in names:
        print(f"== {name}", flush=True)
        figures, output, elapsed, rss = run_one(name, args.quick)
        print(output[-1500:], flush=True)
        status = f"{elapsed:.0f} s, peak RSS of the benchmark process {rss:.0f} MiB"
        if figures is None:
            sections += [f"## {name}", "", f"not run or failed ({status}):", "", "```", output.strip()[-1500:], "```", ""]
            continue
        results[name] = figures
        sections += [f"## {name}", "", f"{status}", "", "```", output.strip(), "```", ""]
    lines += ["## Goals", "", "| benchmark | measure | goal | measured | met |", "|---|---|---|---|---|"]
    for bench, expr, op, target, desc in GOALS:
        value = _value(results.get(bench, {}), expr) if bench in results else None
        met = "-" if value is None else ("yes" if (value >= target if op == ">=" else value <= target) else "NO")
        shown = "not measured" if value is None else f"{value:,.2f}"
        lines.append(f"| {bench} | {desc} | {op} {target:,} | {shown} | {met} |")
    lines.append("")
    plots = _plot(results)
    lines += [f"![{p}]({p})" for p in plots] + [""] + sections
    (RESULTS / "REPORT.md").write_text("\n".join(lines))
    print(f"wrote {RESULTS / 'REPORT.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
