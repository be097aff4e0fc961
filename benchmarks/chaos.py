"""The chaos suite: writers of every kind killed with SIGKILL at random moments, over and over.

    ./run chaos [--kills 100] [--kinds api_mor,api_cow,services,two_writers,stream_sink,stream_reader]
                [--store local|s3]

Each Python API kind also runs on a table of version 9 (`api_mor_v9`, `api_cow_v9`, `services_v9`,
`two_writers_v9`: timeline layout 2, Avro commit metadata, completion times) with its metadata table on, as
`hoodie.metadata.enable` defaults to on version 9: the table is created without one and the first writer
bootstraps it (a kill may land in the bootstrap); hudi-rs then lists the files through it, and `validate` compares
it with the committed files and its timeline with the data timeline. `api_mor_simple` and `two_writers_simple` write a merge-on-read table with Hudi's SIMPLE index
(each write reads the keys of the partitions it touches; new keys fill small files or make file groups; two
writers inserting into one partition conflict and retry).

Python API kinds: each writer runs in its own process and works through a fixed, seeded list of operations
(upserts, deletes, partition overwrites; the services kind also compacts, cleans and archives), logging each
operation once its call returned. While it runs, this process reads the table again and again (a reader racing
the writers and their services); then it kills the writer at a random moment and checks the table:

- consistent: our reader gives the state of the logged operations, with the one in flight wholly present or
  wholly absent (no partial commit), and no duplicate key;
- hudi-rs reads the same rows; `validate` finds no error;
- every racing read saw such a state too (no partial commit, no missing file);
- the restarted writer's next write succeeds (it redoes the operation in flight, which is idempotent).

Two writers write disjoint key ranges into the same file groups, so their commits conflict; a writer that gets
CommitConflictError retries. The Spark kinds (local store only): `stream_sink` is a streaming query (one source
file per micro-batch, inline compaction and cleaning) killed and restarted from its checkpoint; the table must
always hold the first n micro-batches exactly. `stream_reader` is a change-feed query killed and restarted while
an API writer commits (and compacts); its output (Spark's exactly-once file sink) must always hold the table's
changes up to the commit it consumed, each once.

Prints one row per kind: kills, writes completed, racing reads (and bad ones), rounds (checks of the table), and
how many rounds were consistent / had duplicates / lost a returned write / showed a partial commit / had hudi-rs
agree / had validate clean, and the time. Not part of the CI test run (tests/test_chaos.py runs a few kills of
the API kinds; tests/spark has the streaming crash tests).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"
KEYS = 60
OPS = 5000  # more than any run gets through: each writer's table state stays a prefix of its list
PARTITIONS = ["p0", "p1", "p2"]


# ---- the operations and their model ---------------------------------------------------------------------------

def operations(seed: int, first_key: int, overwrites: bool = True) -> list[dict[str, Any]]:
    """A fixed list of operations over keys first_key..first_key+KEYS; values make every op distinguishable.
    Without `overwrites` (two writers: an overwrite would replace the other writer's rows of a partition)."""
    rng = random.Random(seed)
    ops = []
    for n in range(OPS):
        kind = rng.choices(["upsert", "delete", "overwrite"], [8, 2, 1 if overwrites else 0])[0]
        keys = sorted(rng.sample(range(first_key, first_key + KEYS), rng.randint(1, 12)))
        part = rng.choice(PARTITIONS)
        ops.append({"n": n, "kind": kind, "part": part,
                    "rows": [{"id": f"k{k}", "p": part if kind == "overwrite" else PARTITIONS[k % 3],
                              "ts": n + 1, "v": float(n * 1000 + k)} for k in keys]})
    return ops


def model(ops: list[dict[str, Any]], upto: int, owned: set[str] | None = None) -> dict[tuple[str, str], float]:
    """The rows (partition, key) -> v after operations 0..upto-1 (ordering values grow, so the latest wins)."""
    state: dict[tuple[str, str], float] = {}
    for op in ops[:upto]:
        if op["kind"] == "overwrite":
            state = {k: v for k, v in state.items() if k[0] != op["part"]}
        for r in op["rows"]:
            if op["kind"] == "delete":
                state.pop((r["p"], r["id"]), None)
            else:
                state[(r["p"], r["id"])] = r["v"]
    return state if owned is None else {k: v for k, v in state.items() if k[1] in owned}


# ---- the writer process ----------------------------------------------------------------------------------------

def child(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from hudi_ds import CommitConflictError, HudiTable

    opts = {"compaction.delta_commits": 4, "clean.retain_commits": 3, "archive.min_commits": 6,
            "archive.max_commits": 9, "hoodie.client.heartbeat.timeout.secs": 2}
    table = HudiTable(args.table, options=opts, storage_options=_storage_options())
    ops = operations(args.seed, args.first_key, overwrites=not args.no_overwrites)
    log = Path(args.log)
    done = int(log.read_text().split()[-1]) + 1 if log.exists() and log.read_text().split() else 0
    schema = pa.schema([("id", pa.string()), ("p", pa.string()), ("ts", pa.int64()), ("v", pa.float64())])
    for op in ops[done:]:
        rows = pa.Table.from_pylist(op["rows"], schema=schema)
        operation = {"upsert": "upsert", "delete": "delete", "overwrite": "insert_overwrite"}[op["kind"]]
        while True:
            try:
                table.write(rows, operation)
                break
            except CommitConflictError:
                time.sleep(random.random() * 0.05)
        if args.services and op["n"] % 3 == 2:
            table.compact()
            table.clean(retain_commits=2)
            table.archive(min_commits=4, max_commits=6)
        with open(log, "a") as f:
            f.write(f"{op['n']}\n")
            f.flush()
            os.fsync(f.fileno())
    return 0


def _storage_options() -> dict[str, str] | None:
    raw = os.environ.get("CHAOS_STORAGE_OPTIONS")
    return json.loads(raw) if raw else None


# ---- the suite -------------------------------------------------------------------------------------------------

@dataclass
class Kind:
    name: str
    table_type: str
    writers: int = 1
    services: bool = False
    runner: str = "api"  # or "stream_sink", "stream_reader" (Spark, local store)
    version: int = 6  # hoodie.write.table.version of the table (9: with a metadata table, the option's default)
    index: str = "BUCKET"  # hoodie.index.type: SIMPLE finds each key's file group by reading the table's keys


KINDS = {
    "api_mor": Kind("api_mor", "MERGE_ON_READ"),
    "api_cow": Kind("api_cow", "COPY_ON_WRITE"),
    "services": Kind("services", "MERGE_ON_READ", services=True),
    "two_writers": Kind("two_writers", "MERGE_ON_READ", writers=2),
    "api_mor_v9": Kind("api_mor_v9", "MERGE_ON_READ", version=9),
    "api_cow_v9": Kind("api_cow_v9", "COPY_ON_WRITE", version=9),
    "services_v9": Kind("services_v9", "MERGE_ON_READ", services=True, version=9),
    "two_writers_v9": Kind("two_writers_v9", "MERGE_ON_READ", writers=2, version=9),
    "api_mor_simple": Kind("api_mor_simple", "MERGE_ON_READ", index="SIMPLE"),
    "two_writers_simple": Kind("two_writers_simple", "MERGE_ON_READ", writers=2, index="SIMPLE"),
    "stream_sink": Kind("stream_sink", "MERGE_ON_READ", runner="stream_sink"),
    "stream_reader": Kind("stream_reader", "MERGE_ON_READ", runner="stream_reader"),
}


@dataclass
class Tally:
    kills: int = 0
    rounds: int = 0  # checks of the table (two writers are killed per round)
    writes: int = 0  # operations the writers completed (micro-batches, for the streaming kinds)
    reads: int = 0  # reads racing the writers
    bad_reads: int = 0  # racing reads that failed or saw a state no prefix of the writes gives
    expired_reads: int = 0  # racing reads that outlasted the clean window (MissingFileError), as in Apache Hudi
    consistent: int = 0
    duplicates: int = 0
    lost: int = 0
    partial: int = 0
    hudi_rs_agrees: int = 0
    validate_clean: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


def run_kind(kind: Kind, kills: int, work: Path, uri: str, storage_options: dict[str, str] | None,
             rng: random.Random, window: tuple[float, float]) -> Tally:
    from hudi_ds import HudiTable

    bucket = kind.index == "BUCKET"
    HudiTable.create(uri, table_name=kind.name, record_key="id", ordering_field="ts", partition_by="p",
                     table_type=kind.table_type, buckets=2 if bucket else None, storage_options=storage_options,
                     options={"compaction.schedule.enabled": "false",
                              "hoodie.write.table.version": str(kind.version),
                              "hoodie.metadata.enable": "false",  # the writers' default builds it (v9)
                              "hoodie.index.type": kind.index})
    tally, started = Tally(), time.monotonic()
    overwrites = kind.writers == 1
    writers = [(w, work / f"{kind.name}-{w}.log", operations(100 + w, w * KEYS, overwrites))
               for w in range(kind.writers)]
    env = dict(os.environ, CHAOS_STORAGE_OPTIONS=json.dumps(storage_options or {}))
    while tally.kills < kills:
        procs = [subprocess.Popen([sys.executable, __file__, "--child", "--table", uri, "--log", str(log),
                                   "--seed", str(100 + w), "--first-key", str(w * KEYS)]
                                  + (["--services"] if kind.services else [])
                                  + ([] if overwrites else ["--no-overwrites"]),
                                  env=env, stdout=subprocess.DEVNULL, stderr=open(work / f"{kind.name}.err", "ab"),
                                  start_new_session=True) for w, log, _ in writers]
        # imports take ~0.8 s: kills land in every phase of a write
        _read_while_writing(tally, uri, storage_options, writers, time.monotonic() + rng.uniform(*window))
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                tally.kills += 1
            elif p.returncode != 0:
                err = (work / f"{kind.name}.err").read_text().strip().splitlines()
                tally.failures.append(f"a writer failed by itself (exit {p.returncode}): {err[-1] if err else ''}")
            p.wait()
        _check(tally, uri, storage_options, writers)
        if tally.failures or any(_logged(log) >= OPS for _, log, _ in writers):
            break
    tally.seconds = time.monotonic() - started
    return tally


def _read_while_writing(tally: Tally, uri: str, storage_options: dict[str, str] | None,
                        writers: list[tuple[int, Path, list[dict[str, Any]]]], until: float) -> None:
    """Read the table until `until`: each read must show, per writer, the state after some prefix of its
    operations between what it had logged before the read and one past what it logged after."""
    from hudi_ds import HudiDsError, HudiTable, MissingFileError

    table = HudiTable(uri, storage_options=storage_options)
    while time.monotonic() < until:
        before = [_logged(log) for _, log, _ in writers]
        try:
            got = table.to_arrow(columns=["id", "p", "v"]).to_pylist() if "id" in table.schema.names else []
        except MissingFileError:
            # the read outlasted clean.retain_commits while writers kept committing (its slices were cleaned
            # under it, re-planned three times): Hudi's documented limit, not a loss; the check after the
            # kill reads the quiet table and must succeed
            tally.reads += 1
            tally.expired_reads += 1
            continue
        except HudiDsError as exc:
            tally.reads += 1
            tally.bad_reads += 1
            tally.failures.append(f"racing read failed: {type(exc).__name__}: {exc}")
            continue
        tally.reads += 1
        state = {(r["p"], r["id"]): r["v"] for r in got}
        ok = len(state) == len(got)
        for (w, log, ops), lo in zip(writers, before, strict=True):
            owned = {f"k{k}" for k in range(w * KEYS, (w + 1) * KEYS)}
            mine = {k: v for k, v in state.items() if k[1] in owned}
            ok = ok and any(mine == model(ops, n, owned) for n in range(lo, _logged(log) + 2))
        if not ok:
            tally.bad_reads += 1
            tally.failures.append("a racing read saw a state no prefix of the logged writes gives")
        time.sleep(0.05)


def _logged(log: Path) -> int:
    text = log.read_text().split() if log.exists() else []
    return int(text[-1]) + 1 if text else 0


def _check(tally: Tally, uri: str, storage_options: dict[str, str] | None,
           writers: list[tuple[int, Path, list[dict[str, Any]]]]) -> None:
    from hudi import HudiTableBuilder

    from hudi_ds import HudiTable
    from hudi_ds.cli.validate import validate

    table = HudiTable(uri, storage_options=storage_options)
    got = table.to_arrow(columns=["id", "p", "v"]).to_pylist() if "id" in table.schema.names else []
    keys = [(r["p"], r["id"]) for r in got]
    state = {(r["p"], r["id"]): r["v"] for r in got}
    ok = True
    if len(keys) != len(set(keys)):
        tally.duplicates += 1
        ok = False
    for w, log, ops in writers:
        owned = {f"k{k}" for k in range(w * KEYS, (w + 1) * KEYS)}
        mine = {k: v for k, v in state.items() if k[1] in owned}
        done = _logged(log)
        if mine in (model(ops, done, owned), model(ops, done + 1, owned)):
            continue
        ok = False
        earlier = any(mine == model(ops, n, owned) for n in range(max(0, done - 3), done))
        if earlier:
            tally.lost += 1
        else:
            tally.partial += 1
        tally.failures.append(f"writer {w} after op {done}: table matches no model state")
    tally.rounds += 1
    tally.writes = sum(_logged(log) for _, log, _ in writers)
    if table.config.version >= 8 and tally.writes and "files" not in table.config.metadata_partitions:
        tally.failures.append("a version 8/9 table written by default has no metadata table in use")
    tally.consistent += ok
    _as_the_next_writer(table)
    recovered = HudiTable(uri, storage_options=storage_options).to_arrow(columns=["id", "p", "v"]).to_pylist() \
        if "id" in table.schema.names else []
    if sorted((r["p"], r["id"], r["v"]) for r in recovered) != sorted((k[0], k[1], v) for k, v in state.items()):
        tally.failures.append(f"the next writer's recovery (rollback, pending compactions) changed the table; "
                              f"timeline {_timeline_tail(uri, storage_options)}")
    builder = HudiTableBuilder.from_base_uri(uri.replace("s3a://", "s3://"))
    if storage_options:
        builder = builder.with_storage_options(storage_options)
    batches = builder.build().read()
    theirs = sorted((r["p"], r["id"], r["v"]) for b in batches for r in b.select(["p", "id", "v"]).to_pylist())
    ours = sorted((k[0], k[1], v) for k, v in state.items())
    tally.hudi_rs_agrees += theirs == ours
    if theirs != ours:
        only_theirs, only_ours = sorted(set(theirs) - set(ours)), sorted(set(ours) - set(theirs))
        tally.failures.append(f"hudi-rs differs: {len(only_theirs)} rows only in hudi-rs {only_theirs[:2]}, "
                              f"{len(only_ours)} only in ours {only_ours[:2]}; timeline {_timeline_tail(uri, storage_options)}")
    report = validate(table)
    tally.validate_clean += bool(report["ok"])
    if not report["ok"]:
        tally.failures.append(f"validate: {report['errors'][:2]}")


def _timeline_tail(uri: str, storage_options: dict[str, str] | None) -> list[str]:
    from hudi_ds import HudiTable

    return [f"{i.requested_time[-6:]}.{i.action}.{i.state.name.lower()}"
            for i in HudiTable(uri, storage_options=storage_options).timeline()[-6:]]


def _as_the_next_writer(table: Any) -> None:
    """What the next writer does before hudi-rs is asked: hudi-rs does not check log blocks against the
    timeline on version-6 tables, so the killed writers' instants are rolled back first (as Apache Hudi's
    writers do); and it does not see logs written while a compaction is pending (docs/compatibility.md), so
    pending plans are executed."""
    from hudi_ds.recovery.rollback import rollback_failed_writes
    from hudi_ds.services.compaction import run_compaction

    rollback_failed_writes(table.storage, table.config, timeout_s=0)
    if table.config.is_mor:
        run_compaction(table, wait_s=0, heartbeat_timeout_s=0)


def _table(store: str, results: dict[str, Tally]) -> list[str]:
    header = (f"{'writer kind':14s} {'kills':>6s} {'writes':>6s} {'reads':>6s} {'exp':>4s} {'bad':>4s} {'rounds':>6s} "
              f"{'consistent':>10s} {'dups':>5s} {'lost':>5s} {'partial':>7s} {'hudi-rs':>7s} {'validate':>8s} {'time':>7s}")
    table = [f"store: {store}", header]
    for name, t in results.items():
        table.append(f"{name:14s} {t.kills:6d} {t.writes:6d} {t.reads:6d} {t.expired_reads:4d} {t.bad_reads:4d} {t.rounds:6d} "
                     f"{t.consistent:10d} {t.duplicates:5d} {t.lost:5d} {t.partial:7d} {t.hudi_rs_agrees:7d} "
                     f"{t.validate_clean:8d} {t.seconds:6.0f}s")
        table += [f"    {failure}" for failure in t.failures[:5]]
    return table


def _write_results(args: argparse.Namespace, results: dict[str, Tally]) -> None:
    if args.report:
        Path(args.report).write_text("\n".join([
            f"## chaos ({args.store})", "",
            f"`./run chaos --kills {args.kills} --store {args.store} --seed {args.seed}`, "
            f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}. Writers killed with SIGKILL at random moments; every "
            "round checks the table against the writes that returned (see benchmarks/chaos.py).", "",
            "```", *_table(args.store, results), "```", ""]))
    if args.json:
        Path(args.json).write_text(json.dumps({n: vars(t) for n, t in results.items()}, indent=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--store", choices=["local", "s3"], default="local")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--report", help="also write the table as a Markdown section (benchmarks/run.py puts "
                                     "benchmarks/results/chaos-<store>.md into REPORT.md)")
    ap.add_argument("--workdir", help="keep the tables and writer logs here (default: a temporary folder)")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--table")
    ap.add_argument("--log")
    ap.add_argument("--first-key", type=int, default=0)
    ap.add_argument("--services", action="store_true")
    ap.add_argument("--no-overwrites", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child(args)
    import tempfile

    rng = random.Random(args.seed)
    results: dict[str, Tally] = {}
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        storage_options = None
        if args.store == "s3":
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
            from s3_server import start

            server, s3 = start()
        for name in args.kinds.split(","):
            if args.store == "s3":
                uri, storage_options = f"s3://{s3.new_bucket()}/{name}", s3.options()
            else:
                uri = str(work / name)
            window = (1.0, 3.0) if args.store == "local" else (2.0, 6.0)  # moto answers slowly
            kind = KINDS[name]
            if kind.runner != "api" and args.store != "local":
                print(f"{name}: the Spark kinds run on local disk only (tests/spark covers s3a)", file=sys.stderr)
            elif kind.runner != "api":
                from chaos_spark import run_stream_reader, run_stream_sink

                run = run_stream_sink if kind.runner == "stream_sink" else run_stream_reader
                results[name] = run(args.kills, work, uri, rng)
            else:
                results[name] = run_kind(kind, args.kills, work, uri, storage_options, rng, window)
            _write_results(args, results)  # after each kind: a long run that is cut short keeps what it measured
        if server is not None:
            server.stop()
    print("\n".join(_table(args.store, results)))
    bad = any(t.duplicates or t.lost or t.partial or t.failures for t in results.values())
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
