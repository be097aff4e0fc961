"""The README and the pages under docs/ do not rot.

- docs/options.md is generated from the option model and must not go stale.
- Every relative link (and its #anchor) resolves, and every docs page is linked from the README.
- Every ```python block parses; a block marked `<!-- doc-test: run ... -->` on the line above its fence
  runs. `run id=NAME` names a block; `run after=NAME` runs NAME first, in the same namespace. Runnable
  blocks run in a temporary directory: `/tmp/` paths point into it, and PLACEHOLDERS stand in for paths the
  reader fills in. `<!-- doc-test: sketch (why) -->` marks a python block that is not meant to parse
  (elisions such as `...`).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# paths the reader replaces with their own, mapped to a table an earlier runnable block created
PLACEHOLDERS = {"/path/written/by/apache/hudi": "/tmp/trips"}

FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
MARKER = re.compile(r"^<!--\s*doc-test:\s*(\w+)(.*?)-->\s*$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`]*`")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None  # "run" or "sketch"
    args: dict[str, str]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


def parse(page: Path) -> tuple[list[Block], list[str]]:
    """The page's fenced code blocks, and its prose lines (code blocks blanked, to keep line numbers)."""
    lines = page.read_text().splitlines()
    blocks: list[Block] = []
    prose: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        assert j < len(lines), f"{_rel(page)}:{start + 1}: code block never closed"
        marker, args = None, {}
        above = MARKER.match(lines[start - 1]) if start else None
        if above:
            marker = above.group(1)
            assert marker in ("run", "sketch"), f"{_rel(page)}:{start}: unknown doc-test marker {marker!r}"
            args = dict(kv.split("=", 1) for kv in above.group(2).split() if "=" in kv) if marker == "run" else {}
        blocks.append(Block(page, start + 1, lang, "\n".join(lines[start + 1 : j]), marker, args))
        prose.extend([""] * (j - start + 1))
        i = j + 1
    for n, line in enumerate(prose):
        if MARKER.match(line) and not (n + 1 < len(lines) and FENCE.match(lines[n + 1])):
            raise AssertionError(f"{_rel(page)}:{n + 1}: doc-test marker not directly above a code block")
    return blocks, prose


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    _, prose = parse(page)
    seen: dict[str, int] = {}
    out = set()
    for line in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[tuple[int, str]]:
    _, prose = parse(page)
    return [(n + 1, target) for n, line in enumerate(prose) for target in LINK.findall(INLINE_CODE.sub("", line))]


ALL_BLOCKS = [b for page in PAGES for b in parse(page)[0]]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "python"]
RUNNABLE = [b for b in PYTHON_BLOCKS if b.marker == "run"]
BY_ID = {b.args["id"]: b for b in RUNNABLE if "id" in b.args}


def test_options_doc_is_current():
    spec = importlib.util.spec_from_file_location("gen_options", ROOT / "docs" / "gen_options.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    current = (ROOT / "docs" / "options.md").read_text()
    assert current == gen.render(), "docs/options.md is stale: run ./run py docs/gen_options.py"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_relative_links_resolve(page):
    broken = []
    for line, target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{_rel(page)}:{line}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{_rel(page)}:{line}: {target} (no heading #{anchor} in {dest.name})")
    assert not broken, "\n".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / t.partition("#")[0]).resolve() for _, t in links(ROOT / "README.md")}
    missing = [_rel(p) for p in PAGES[1:] if p.resolve() not in linked]
    assert not missing, f"docs pages not linked from README.md: {missing}"


def test_readme_two_commands_are_what_ci_runs():
    blocks, _ = parse(ROOT / "README.md")
    bash = "\n".join(b.code for b in blocks if b.lang == "bash")
    assert re.search(r"^\./run demo\b", bash, re.M) and re.search(r"^\./run test\b", bash, re.M)
    assert "exec ./run test" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.where)
def test_python_blocks_parse(block):
    if block.marker == "sketch":
        with pytest.raises(SyntaxError):
            ast.parse(block.code)  # a sketch that parses needs no marker: drop it, so the block is checked
    else:
        ast.parse(block.code, filename=block.where)


def _run(block: Block, namespace: dict, tmp_path: Path) -> None:
    if "after" in block.args:
        assert block.args["after"] in BY_ID, f"{block.where}: no runnable block with id={block.args['after']}"
        _run(BY_ID[block.args["after"]], namespace, tmp_path)
    code = block.code
    for placeholder, path in PLACEHOLDERS.items():
        code = code.replace(placeholder, path)
    code = code.replace('"/tmp/', f'"{tmp_path}/')
    exec(compile(code, block.where, "exec"), namespace)


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.where)
def test_runnable_blocks_run(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _run(block, {"__name__": "__doc_test__"}, tmp_path)
