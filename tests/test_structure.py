"""The package's shape stays as designed: write/ and services/ do not import each other, the on-disk layout
and the meta column names are spelled in one module each."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hudi_ds"


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def _runtime_imports(path: Path) -> set[str]:
    """Modules imported when `path` runs: `if TYPE_CHECKING:` blocks are left out; imports inside functions
    count (they run when the function does)."""
    tree = ast.parse(path.read_text())
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                type_only.update(id(n) for n in ast.walk(inner))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _offenders(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in _modules(folder):
        for name in sorted(_runtime_imports(path)):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(PACKAGE)} imports {name}")
    return bad


def test_write_does_not_import_services():
    assert _offenders("write", ("hudi_ds.services",)) == []


def test_services_do_not_import_the_write_path_or_the_table():
    assert _offenders("services", ("hudi_ds.write", "hudi_ds.table")) == []


def test_the_check_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import hudi_ds.table\n"
                      "def f():\n    from hudi_ds.write import commit\n")
    found = _runtime_imports(module)
    assert "hudi_ds.write.commit" in found
    assert "hudi_ds.table" not in found


def _source_lines(exclude: str) -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / exclude:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            out.append((str(path.relative_to(PACKAGE)), n, line))
    return out


def test_temp_folder_is_named_only_by_the_layout_module():
    hits = [f"{p}:{n}" for p, n, line in _source_lines("storage/layout.py") if ".temp" in line]
    assert hits == []


@pytest.mark.parametrize("call", ["Timeline.load(", "TimelineWriter(", "Visibility.of(", "parse_instant_file_name("])
def test_no_literal_layout_version(call):
    """The timeline layout comes from the table's format object (hudi_ds.table_format), never a bare number."""
    hits = []
    for p, n, line in _source_lines("storage/layout.py"):
        start = line.find(call)
        if start < 0:
            continue
        args = line[start + len(call):].split(")")[0]
        if any(a.strip().isdigit() for a in args.split(",")):
            hits.append(f"{p}:{n}: {line.strip()}")
    assert hits == []


def test_record_key_column_is_spelled_only_in_schema_meta():
    hits = [f"{p}:{n}" for p, n, line in _source_lines("schema/meta.py") if "_hoodie_record_key" in line]
    assert hits == []
