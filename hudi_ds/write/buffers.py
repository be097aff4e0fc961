"""A write task's rows per file group until the group is written, within a memory bound (spilled to local Arrow
IPC files past it)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from hudi_ds.write.routing import RowSelection


@dataclass
class GroupBuffers:
    """Each file group's rows until it is written. They stay selections of the input (gathered on a writer
    thread when the group's turn comes) until the buffers pass `max_bytes`: then every group is gathered (so
    spilling one frees its rows) and the largest are spilled to local Arrow IPC files."""

    max_bytes: int
    mem: dict[tuple[str, int], list[RowSelection]] = field(default_factory=dict)
    sizes: dict[tuple[str, int], int] = field(default_factory=dict)
    spills: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    spill_dir: str | None = None

    def add(self, key: tuple[str, int], rows: RowSelection) -> None:
        self.mem.setdefault(key, []).append(rows)
        self.sizes[key] = self.sizes.get(key, 0) + rows.nbytes
        if sum(self.sizes.values()) > self.max_bytes:
            for held in self.mem.values():  # a selection keeps its whole source alive: gather before spilling
                held[:] = [RowSelection(r.gather()) for r in held]
        while sum(self.sizes.values()) > self.max_bytes and self.sizes:
            self._spill(max(self.sizes, key=lambda k: self.sizes[k]))

    def _spill(self, key: tuple[str, int]) -> None:
        if self.spill_dir is None:
            self.spill_dir = tempfile.mkdtemp(prefix="hudi_ds_spill_")
        path = f"{self.spill_dir}/{len(sum(self.spills.values(), []))}.arrow"
        tables = [r.gather() for r in self.mem.pop(key)]
        self.sizes.pop(key)
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, tables[0].schema) as w:
            for t in tables:
                w.write_table(t)
        self.spills.setdefault(key, []).append(path)

    def keys(self) -> list[tuple[str, int]]:
        return sorted(set(self.mem) | set(self.spills))

    def pop(self, key: tuple[str, int]) -> Callable[[], pa.Table]:
        """The group's rows out of the buffers, as a function that gathers them (on a writer thread)."""
        paths = self.spills.pop(key, [])
        held = self.mem.pop(key, [])
        self.sizes.pop(key, None)

        def gather() -> pa.Table:
            tables = [pa.ipc.open_file(pa.memory_map(p)).read_all() for p in paths]
            tables += [r.gather() for r in held]
            return pa.concat_tables(tables) if len(tables) > 1 else tables[0]

        return gather

    def take(self, key: tuple[str, int]) -> pa.Table:
        return self.pop(key)()

    def close(self) -> None:
        if self.spill_dir:
            shutil.rmtree(self.spill_dir, ignore_errors=True)
            self.spill_dir = None
