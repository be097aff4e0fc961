"""The benchmark suite: runs every benchmark in its own process, then writes benchmarks/results/REPORT.md
and PNG plots with the machine, library versions and date. `./run bench [--quick]`; a quick smoke run writes
to benchmarks/results/quick/ instead, so it never replaces the last full report.

Every figure is a ratio measured side by side within one benchmark run, and every benchmark checks its own
results (row counts and checksums), so a fast wrong answer fails instead of being reported. Each benchmark
also reports its own memory (the figures ending in _mib, measured by common.py): getrusage(RUSAGE_CHILDREN)
here would only give the largest process ever waited for, and never sees pyspark's Python workers, which are
children of Spark's JVM.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (script, args, quick args). The full suite is sized for under 15 minutes on 2 cores (full run of
# 2026-11-22, 8.5 min: core 9 s, lakes 4 s, scaling 25 s, reference 3 s, spark 72 s, spark_cores 67 s,
# streaming 154 s, stream_read 178 s).
SUITE: dict[str, tuple[str, list[str], list[str]]] = {
    "core": ("bench_core.py", ["--rows", "2000000"], ["--rows", "300000"]),
    "lakes": ("bench_lakes.py", ["--rows", "2000000", "--runs", "3"],
              ["--rows", "200000", "--runs", "1", "--fresh-runs", "1"]),
    "scaling": ("bench_scaling.py", ["--sizes", "1000000,4000000,16000000"], ["--sizes", "200000,800000", "--batch",
                                                                             "20000"]),
    "reference": ("bench_reference.py", ["--repeat", "20"], ["--repeat", "3"]),
    "spark": ("bench_spark.py", ["--rows", "5000000"], ["--rows", "300000"]),
    "spark_cores": ("bench_spark_cores.py", ["--rows", "2000000"], ["--rows", "200000"]),
    "streaming": ("bench_streaming.py", [], ["--seconds", "20", "--log-rows", "200000", "--log-commits", "10"]),
    "stream_read": ("bench_stream_read.py", ["--commits", "60", "--rows", "2000000"],
                    ["--commits", "10", "--rows", "200000"]),
    "object_store": ("bench_object_store.py", ["--rows", "1000000"], ["--rows", "200000"]),
    "metadata_listing": ("bench_metadata_listing.py", ["--partitions", "200", "--buckets", "4", "--commits", "8"],
                         ["--partitions", "200", "--buckets", "2", "--commits", "4", "--repeat", "1"]),
    "lazy": ("bench_lazy.py", ["--rows", "2000000", "--repeat", "5"], ["--rows", "200000", "--repeat", "3"]),
    "index": ("bench_index.py", ["--rows", "2000000", "--runs", "3"], ["--rows", "200000", "--runs", "1"]),
    "data_skipping": ("bench_data_skipping.py", ["--rows", "2000000", "--files", "100", "--repeat", "3"],
                      ["--rows", "200000", "--files", "20", "--repeat", "2"]),
    "timeline": ("bench_timeline.py", ["--commits", "1000"], ["--commits", "150", "--repeat", "2"]),
    "partial": ("bench_partial.py", ["--rows", "2000000", "--rounds", "5"], ["--rows", "200000", "--rounds", "2"]),
    "versions": ("bench_versions.py", ["--rows", "2000000", "--rounds", "6"], ["--rows", "200000", "--rounds", "2"]),
    "avro_decode": ("bench_avro_decode.py", ["--rows", "2000000", "--repeat", "5"],
                    ["--rows", "200000", "--repeat", "2"]),
}

# goal: (benchmark, figure or ratio expression, comparison, target, description)
GOALS = [
    ("core", "insert_rows_s / floor_write_rows_s", ">=", 0.5, "core insert vs pyarrow floor"),
    ("core", "snapshot_read_rows_s / floor_read_rows_s", ">=", 0.4, "core MOR snapshot read vs pyarrow floor"),
    ("core", "upsert_rows_s", ">=", 1_000_000, "core upsert rows/s"),
    ("core", "snapshot_read_rows_s", ">=", 2_500_000, "core MOR snapshot read rows/s"),
    ("core", "import_ratio", "<=", 1.5, "fresh process: import hudi_ds vs import pyarrow alone (CPU s, medians)"),
    ("core", "first_read_ratio", "<=", 1.3, "fresh process: first read of a table vs the second (CPU s, medians)"),
    ("lakes", "load_floor_ratio", ">=", 0.9,
     "load (bulk_insert) vs pyarrow writing the same eleven columns into the same files, same threads"),
    ("lakes", "vk_load_ratio", ">=", 0.9, "load with virtual keys (hoodie.populate.meta.fields=false) vs deltalake"),
    ("lakes", "upsert_ratio", ">=", 5.0, "upsert vs deltalake MERGE"),
    ("lakes", "delete_ratio", ">=", 10.0, "delete vs deltalake MERGE delete"),
    ("lakes", "read_floor_ratio", ">=", 0.8,
     "merge-on-read snapshot with logs (all columns) vs a threaded pyarrow dataset read of its base files"),
    ("lakes", "read_data_ratio", ">=", 0.5, "merge-on-read snapshot of the data columns vs deltalake's read"),
    ("lakes", "read_compacted_floor_ratio", ">=", 1.0,
     "snapshot after compaction (all columns) vs a threaded pyarrow dataset read of its base files"),
    ("lakes", "upsert_vs_paimon", ">=", 1.0, "upsert vs Apache Paimon (pypaimon, Rust path)"),
    ("lakes", "read_vs_paimon", ">=", 1.0, "merge-on-read snapshot (data columns) vs Apache Paimon"),
    ("lakes", "cdf_ratio", ">=", 0.2, "change feed of one upsert, inferred (CDC off), vs deltalake's load_cdf"),
    ("lakes", "cdc_cdf_ratio", ">=", 0.5, "change feed from change data written at commit time vs deltalake's load_cdf"),
    ("lakes", "cdc_upsert_ratio", ">=", 1.0,
     "merge-on-read upsert with hoodie.table.cdc.enabled vs deltalake's MERGE with its change data feed"),
    ("lakes", "cow_cdc_upsert_ratio", ">=", 1.0,
     "copy-on-write upsert with hoodie.table.cdc.enabled vs deltalake's MERGE with its change data feed"),
    ("data_skipping", "read_speedup", ">=", 5.0, "1% filter on a sorted column: read with column_stats vs without"),
    ("data_skipping", "upsert_ratio", "<=", 1.15, "upsert with files + column_stats vs files only"),
    ("versions", "v9_load_cost", "<=", 1.05, "load of a version 9 table vs version 6"),
    ("versions", "v9_upsert_cost", "<=", 1.05, "upsert into a version 9 table vs version 6"),
    ("versions", "v9_delete_cost", "<=", 1.05, "delete from a version 9 table vs version 6"),
    ("versions", "v9_read_cost", "<=", 1.05, "merge-on-read snapshot of a version 9 table vs version 6"),
    ("partial", "partial_upsert_cost", "<=", 1.0, "partial upsert (4 of 6 columns) vs full-row upsert of the same keys"),
    ("partial", "partial_read_cost", "<=", 1.3, "merge-on-read snapshot with partial logs vs full-row logs"),
    ("index", "simple_upsert_ratio", ">=", 2.0, "upsert into a SIMPLE-index table vs deltalake MERGE"),
    ("index", "ordered_bloom_upsert_ratio", ">=", 3.0,
     "upsert into a BLOOM-index table of time-ordered keys (10 loads, updates of the newest) vs deltalake MERGE"),
    ("index", "simple_upsert_rss_growth_mib / delta_upsert_rss_growth_mib", "<=", 1.0,
     "upsert into a SIMPLE-index table: RSS growth vs deltalake"),
    ("index", "ordered_bloom_upsert_rss_growth_mib / ordered_delta_upsert_rss_growth_mib", "<=", 1.0,
     "upsert into a BLOOM-index table of time-ordered keys: RSS growth vs deltalake"),
    ("timeline", "v9_travel_early_cost", "<=", 1.0, "time travel to an archived commit: version 9 history vs 6 archive"),
    ("timeline", "v9_travel_middle_cost", "<=", 1.0, "... to a commit half way through 1,000"),
    ("lakes", "hudi_load_rss_growth_mib / delta_load_rss_growth_mib", "<=", 1.0,
     "load (bulk_insert): peak RSS growth vs deltalake's write"),
    ("lakes", "hudi_read_data_rss_growth_mib / delta_read_data_rss_growth_mib", "<=", 1.0,
     "read of the data columns deltalake returns: RSS growth vs deltalake"),
    ("reference", "speed_vs_hudi_rs", ">=", 1.0, "reading Apache Hudi's tables vs hudi-rs"),
    ("scaling", "ratio_largest_to_smallest", "<=", 1.3, "upsert cost at 16M vs 1M rows"),
    ("spark", "bulk_insert_as_is_ratio", ">=", 0.9,
     "Spark bulk_insert of the input as it is vs built-in parquet write (medians of 3)"),
    ("spark", "bulk_insert_floor_ratio", ">=", 0.9,
     "Spark bulk_insert clustered by bucket vs a no-op Python sink of the same clustered input (medians of 3)"),
    ("spark", "upsert_as_is_ratio", ">=", 0.9, "Spark upsert of the input as it is vs built-in write of the same rows"),
    ("spark", "upsert_simple_ratio", ">=", 0.5, "Spark upsert into a SIMPLE-index table vs built-in write of the same rows"),
    ("spark", "read_floor_ratio", ">=", 0.9, "Spark snapshot read vs the Python Data Source API floor"),
    ("spark", "read_columns_floor_ratio", ">=", 0.9, "... the same read naming its data columns (.schema)"),
    ("spark", "cdc_vs_incremental", ">=", 0.8, "Spark cdc read of a 10% upsert (change data) vs its incremental read"),
    ("spark", "read_table_ratio", ">=", 0.8, "Spark read_table (table without log files) vs built-in parquet read"),
    ("streaming", "sustained_vs_floor", ">=", 0.7,
     "streaming ingest rows/s vs a no-op Python sink fed by the same source, same session"),
    ("streaming", "commit_overhead_s", "<=", 0.3, "commit overhead per small batch (s)"),
    ("stream_read", "latency_median_s", "<=", 2.0, "streaming read: commit -> row latency, median (s)"),
    ("object_store", "read_20ms_over_0ms", "<=", 3.0, "S3 snapshot read with 20 ms/request vs 0 ms"),
    ("object_store", "read_list_requests", "<=", 10, "S3 snapshot read LISTs (8 partitions: O(partitions))"),
    ("object_store", "read_get_requests", "<=", 70, "S3 snapshot read GETs (64 data files: one GET each)"),
    ("object_store", "upsert_put_requests", "<=", 72, "S3 upsert PUTs (32 log files: O(files written))"),
    ("metadata_listing", "listing_over_metadata", ">=", 5.0,
     "S3 snapshot planning, 200 partitions, 20 ms/request: listing vs the metadata table's listing"),
    ("stream_read", "latency_p95_s", "<=", 4.0, "streaming read: commit -> row latency, p95 (s)"),
    ("lazy", "scan_filter_ratio", ">=", 5.0, "scan() of one partition, 2 columns vs to_polars() then the same"),
    ("lazy", "head_s", "<=", 0.1, "scan().head(10) of the snapshot (s)"),
    ("lazy", "duckdb_dataset_ratio", ">=", 0.9, "DuckDB over to_pyarrow_dataset() vs its read_parquet (compacted)"),
    ("stream_read", "stream_read_ratio", ">=", 0.7, "streaming read throughput vs batch read of the same rows"),
    ("streaming", "read_drift_with_compaction", "<=", 1.2,
     "read just after compaction (every 5 delta commits) after 50 commits vs after the first ones"),
]

MEMORY_NOTE = """Peak resident memory (RSS) in MiB, each benchmark measuring its own processes. *Benchmark process,
whole run*: its lifetime peak (ru_maxrss). *During a step* (the largest write and read): the kernel's
high-water mark of the benchmark process, reset just before the step (/proc/self/clear_refs), so it is
exact, not sampled; *growth* is that peak less the RSS when the step began, i.e. what the step needed beyond
the data already in memory. *pyspark Python workers together*: the sum of the RSS of every pyspark daemon and
worker below the benchmark's own Spark JVM, sampled every 0.1 s; pages a forked worker still shares with its
daemon count in both, so the sum is an upper bound. *Largest single worker*: the kernel's high-water mark of
the biggest worker. Spark's JVM is listed for scale (it is not a Python process)."""

# figure-name endings (after any step or master prefix) -> what the memory figure measures
MEMORY_LABELS = [
    ("workers_peak_rss", "pyspark Python workers together, whole run"),
    ("worker_max_rss", "largest single pyspark Python worker"),
    ("jvm_peak_rss", "Spark's JVM"),
    ("peak_rss", "benchmark process, whole run"),
    ("workers_rss", "pyspark Python workers together during {}"),
    ("rss_growth", "benchmark process during {}: growth over its start"),
    ("rss", "benchmark process during {}"),
    ("input", "the input rows as Arrow (for scale)"),
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


def run_one(name: str, quick: bool, results: Path) -> tuple[dict[str, float] | None, str, float]:
    script, args, quick_args = SUITE[name]
    if not (HERE / script).exists():
        return None, f"{script} not present", 0.0
    out = results / f"{name}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(HERE / script), *(quick_args if quick else args), "--json", str(out)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    (results / f"{name}.log").write_text(log)
    if proc.returncode != 0 or not out.exists():
        return None, log[-2000:], elapsed
    return json.loads(out.read_text()), proc.stdout, elapsed


def _value(figures: dict[str, float], expr: str) -> float | None:
    try:
        return float(eval(expr, {}, dict(figures)))  # noqa: S307 - our own constant expressions
    except (NameError, ZeroDivisionError, KeyError):
        return None


def _status(elapsed: float, f: dict[str, float]) -> str:
    rss = f"{f['peak_rss_mib']:,.0f} MiB" if "peak_rss_mib" in f else "not reported"
    out = f"{elapsed:.0f} s; peak RSS of the benchmark process {rss}"
    if "workers_peak_rss_mib" in f:
        out += (f", of pyspark's Python workers together {f['workers_peak_rss_mib']:,.0f} MiB (largest single "
                f"worker {f['worker_max_rss_mib']:,.0f} MiB), Spark's JVM {f['jvm_peak_rss_mib']:,.0f} MiB")
    return out


def _memory_label(name: str) -> str:
    stem = name.removesuffix("_mib")
    for end, label in MEMORY_LABELS:
        if stem == end or stem.endswith("_" + end):
            prefix = stem[: -len(end)].rstrip("_")
            if "{}" in label:
                return label.format(prefix)
            return f"{prefix}: {label}" if prefix else label
    return stem


def _memory_table(results: dict[str, dict[str, float]]) -> list[str]:
    lines = ["## Memory", "", MEMORY_NOTE, "", "| benchmark | measure | MiB |", "|---|---|---|"]
    for bench, figures in results.items():
        lines += [f"| {bench} | {_memory_label(k)} | {v:,.0f} |" for k, v in figures.items() if k.endswith("_mib")]
    return lines + [""]


def _plot(results: dict[str, dict[str, float]], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    if "core" in results:
        f = results["core"]
        labels = ["pyarrow write", "hudi-py insert", "hudi-py upsert", "pyarrow read", "hudi-py read",
                  "hudi-py incremental", "hudi-py change feed"]
        keys = ["floor_write_rows_s", "insert_rows_s", "upsert_rows_s", "floor_read_rows_s", "snapshot_read_rows_s",
                "incremental_rows_s", "changes_rows_s"]
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.barh(labels, [f.get(k, 0) / 1e6 for k in keys],
                color=["#999", "#3a7", "#3a7", "#999", "#37a", "#37a", "#37a"])
        ax.set_xlabel("million rows / s")
        ax.set_title("hudi-py core vs pyarrow parquet")
        fig.tight_layout()
        fig.savefig(out / "core.png", dpi=110)
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
        fig.savefig(out / "scaling.png", dpi=110)
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
        fig.savefig(out / "lakes.png", dpi=110)
        made.append("lakes.png")
    if "spark_cores" in results:
        f = results["spark_cores"]
        ratios = [m.groups() for k in f if (m := re.fullmatch(r"(.+)_(local\d+)_over_(local\d+)", k))]
        steps = [step for step, _, _ in ratios]
        small, big = ratios[0][1], ratios[0][2]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        x = range(len(steps))
        ax.bar([i - 0.2 for i in x], [f[f"{small}_{s}_s"] for s in steps], width=0.4, label=small)
        ax.bar([i + 0.2 for i in x], [f[f"{big}_{s}_s"] for s in steps], width=0.4, label=big)
        for i, s in enumerate(steps):
            ax.annotate(f"{f[f'{s}_{small}_over_{big}']:.2f}x", (i, f[f"{small}_{s}_s"]), ha="center",
                        va="bottom")
        ax.set_xticks(list(x), steps)
        ax.set_ylabel("seconds")
        ax.legend()
        ax.set_title(f"hudi-py Spark job: {small} vs {big} (ratio {small} / {big})")
        fig.tight_layout()
        fig.savefig(out / "spark_cores.png", dpi=110)
        made.append("spark_cores.png")
    if "streaming" in results:
        f = results["streaming"]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for key, label in (("without", "no compaction"), ("with", "compaction every 5 delta commits")):
            points = sorted((int(m[1]), v) for k, v in f.items()
                            if (m := re.fullmatch(rf"read_s_after_(\d+)_{key}_compaction", k)))
            ax.plot([n for n, _ in points], [v for _, v in points], marker=".", label=label)
        ax.set_xlabel("delta commits since the table was created")
        ax.set_ylabel("snapshot read (s)")
        ax.set_ylim(bottom=0)
        ax.legend()
        ax.set_title("snapshot read time as log files accumulate")
        fig.tight_layout()
        fig.savefig(out / "streaming.png", dpi=110)
        made.append("streaming.png")
    return made


def _chaos_sections() -> list[str]:
    """The last chaos runs (`./run chaos --report benchmarks/results/chaos-<store>.md`), kept with their own
    dates: the suite is too long to run with every benchmark report."""
    out: list[str] = []
    for path in sorted((HERE / "results").glob("chaos-*.md")):
        out += [path.read_text().strip(), ""]
    return out


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
    out = HERE / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    names = args.only.split(",") if args.only else list(SUITE)
    results: dict[str, dict[str, float]] = {}
    date = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}" + (" (quick smoke run)" if args.quick else "")
    sections = []
    total = 0.0
    for name in names:
        print(f"== {name}", flush=True)
        figures, output, elapsed = run_one(name, args.quick, out)
        total += elapsed
        print(output[-1500:], flush=True)
        if figures is None:
            sections += [f"## {name}", "", f"not run or failed ({elapsed:.0f} s):", "", "```", output.strip()[-1500:],
                         "```", ""]
            continue
        results[name] = figures
        sections += [f"## {name}", "", _status(elapsed, figures), "", "```", output.strip(), "```", ""]
    lines = ["# hudi-py benchmark report", "", f"- date: {date}", f"- machine: {_machine()}",
             f"- versions: {_versions()}", f"- suite time: {total / 60:.1f} min", ""]
    lines += ["## Goals", "", "| benchmark | measure | goal | measured | met |", "|---|---|---|---|---|"]
    for bench, expr, op, target, desc in GOALS:
        value = _value(results.get(bench, {}), expr) if bench in results else None
        met = "-" if value is None else ("yes" if (value >= target if op == ">=" else value <= target) else "NO")
        shown = "not measured" if value is None else f"{value:,.2f}"
        lines.append(f"| {bench} | {desc} | {op} {target:,} | {shown} | {met} |")
    lines.append("")
    plots = _plot(results, out)
    lines += [f"![{p}]({p})" for p in plots] + [""] + _memory_table(results) + sections + _chaos_sections()
    (out / "REPORT.md").write_text("\n".join(lines))
    print(f"wrote {out / 'REPORT.md'} (suite time {total / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
