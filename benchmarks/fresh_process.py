"""What a fresh process pays before its first answer: `import pyarrow`, `import hudi_ds`, and the first read of a
table against the second read in the same process (issue 32). Each figure is the median over fresh processes, in
CPU seconds of the process (the machine is shared: CPU time moves less than wall time under contention). The
modules' bytecode is cached first, as in an installed package: a source checkout run with PYTHONDONTWRITEBYTECODE
(this sandbox sets it) would compile every hudi_ds module in every process, ~0.4 s that no user pays.

Where pandas is installed (the test extra installs it), pyarrow imports it at the first Arrow array or scalar a
process builds (its pandas shim): ~0.45 CPU-s that whatever builds the first array pays. That is pyarrow's cost, not
hudi_ds's: the sample builds one array right after `import pyarrow` and times it apart (`pyarrow_first_array_s`),
so `import hudi_ds` and the reads are measured without it, as where pandas is not installed.

    ./run py benchmarks/fresh_process.py TABLE_PATH [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

# one sample, run in a fresh interpreter: CPU seconds (all threads) of each step, printed as JSON
_SAMPLE = """
import json, sys, time
t = time.process_time
s = t(); import pyarrow; pa_s = t() - s
s = t(); pyarrow.array([0]); first_array_s = t() - s
s = t(); import hudi_ds; hudi_s = t() - s
s = t(); table = hudi_ds.HudiTable(sys.argv[1]); first = table.to_arrow(); first_s = t() - s
s = t(); second = hudi_ds.HudiTable(sys.argv[1]).to_arrow(); second_s = t() - s
assert first.num_rows == second.num_rows
print(json.dumps({"import_pyarrow_s": pa_s, "pyarrow_first_array_s": first_array_s,
                  "import_hudi_ds_s": pa_s + hudi_s, "first_read_s": first_s, "second_read_s": second_s}))
"""


def fresh_sample(code: str, *args: str) -> dict[str, float]:
    """Run `code` in a fresh interpreter that writes and uses bytecode caches, as an installed package does; it
    prints one JSON object of figures, returned."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # -P: modules of the current folder do not shadow the installed ones
    done = subprocess.run([sys.executable, "-P", "-c", code, *args], check=True, capture_output=True, text=True,
                          env=env)
    return dict(json.loads(done.stdout))


def fresh_process_figures(table_path: str, runs: int = 5) -> dict[str, float]:
    """Medians over `runs` fresh processes, with the two ratios issue 32 sets goals on: `import hudi_ds` against
    `import pyarrow` alone (<= 1.5x) and the first read against the second (<= 1.3x)."""
    fresh_sample(_SAMPLE, table_path)  # writes the bytecode caches
    samples = [fresh_sample(_SAMPLE, table_path) for _ in range(runs)]
    figures = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    figures["import_ratio"] = figures["import_hudi_ds_s"] / figures["import_pyarrow_s"]
    figures["first_read_ratio"] = figures["first_read_s"] / figures["second_read_s"]
    return figures


def describe(f: dict[str, float]) -> str:
    return (f"  fresh process (CPU s, medians): import pyarrow {f['import_pyarrow_s']:.3f} (then its first array "
            f"{f['pyarrow_first_array_s']:.3f}), import hudi_ds "
            f"{f['import_hudi_ds_s']:.3f} ({f['import_ratio']:.2f}x, goal <= 1.5x); first read "
            f"{f['first_read_s']:.3f}, second {f['second_read_s']:.3f} ({f['first_read_ratio']:.2f}x, goal <= 1.3x)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(describe(fresh_process_figures(args.table, args.runs)))
