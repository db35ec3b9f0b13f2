"""Tests for the panel cache of bookbuild.site.panels: a page read again takes its
panels' data and static figures from ``_build/panel-cache`` while nothing they were
computed from changed, and recomputes them when anything did.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

from bookbuild.site import panels
from bookbuild.site.panels import CACHE_FILES, PanelCache


@pytest.fixture
def fake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root holding the cache's own files and one imported ``chapter_code``
    module."""
    root = tmp_path / "repo"
    for name in CACHE_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n")
    module = root / "chapter_code" / "fake_panel_source.py"
    module.write_text("WEIGHT = 1.0\n")
    fake = types.ModuleType("chapter_code_fake_panel_source")
    fake.__file__ = str(module)
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    return root


def stored(root: Path) -> PanelCache:
    cache = PanelCache(root / "_build" / "panel-cache", root=root)
    cache.put(
        "keep-dial",
        {"title": "T", "symbols": {"z": "z", "a": "a"}},
        '{"title":"T"}',
        b"png bytes",
    )
    return cache


def test_an_entry_comes_back_as_stored_with_the_files_it_was_computed_from(
    fake_root: Path,
) -> None:
    cache = stored(fake_root)
    data, script_json, png = cache.get("keep-dial")  # type: ignore[misc]
    assert (data, script_json, png) == (
        {"title": "T", "symbols": {"z": "z", "a": "a"}},
        '{"title":"T"}',
        b"png bytes",
    )
    # in the order the panel gave them: the page typesets them so
    assert list(data["symbols"]) == ["z", "a"]
    entry = json.loads(
        (fake_root / "_build" / "panel-cache" / "keep-dial.json").read_text()
    )
    assert set(entry["files"]) == {"chapter_code/fake_panel_source.py", *CACHE_FILES}
    assert cache.get("one-unit") is None  # never stored
    assert sorted(cache.sources("keep-dial")) == sorted(
        fake_root / f for f in entry["files"]
    )  # type: ignore[arg-type]
    assert cache.sources("one-unit") is None


def test_a_page_that_takes_its_panel_from_the_cache_notes_its_sources_without_importing_the_registries(  # noqa: E501 (a test name)
    tmp_path: Path,
) -> None:
    import subprocess

    (tmp_path / "conf.py").write_text(SPHINX_CONF)
    (tmp_path / "index.rst").write_text("Panel\n=====\n\n.. book-panel:: keep-dial\n")
    build_panel_page(tmp_path)  # computes and stores the panel
    out = tmp_path / "_build" / "html"
    script = (
        "import sys, pickle\n"
        "from sphinx.cmd.build import build_main\n"
        f"assert build_main(['-q', '-E', '-b', 'html', {str(tmp_path)!r}, "
        f"{str(out)!r}]) == 0\n"
        "assert 'torch' not in sys.modules and 'chapter_code.panels.data' not in "
        "sys.modules, 'imported'\n"
        f"env = pickle.load(open({str(out / '.doctrees' / 'environment.pickle')!r}, "
        "'rb'))\n"
        "print(sorted(str(d) for d in env.dependencies['index']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "BOOK_BUILD_DIR"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=panels.ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "chapter_code/panels/data.py" in proc.stdout
    assert "chapter_code/core/book.mplstyle" in proc.stdout


@pytest.mark.parametrize("edited", ["chapter_code/fake_panel_source.py", *CACHE_FILES])
def test_an_edit_to_any_file_it_was_computed_from_recomputes_it_and_undoing_the_edit_does_not(  # noqa: E501  (the test's name)
    fake_root: Path, edited: str
) -> None:
    cache = stored(fake_root)
    path = fake_root / edited
    before = path.read_text()
    path.write_text(
        before + ("EDITED = 1\n" if edited.endswith(".py") else "# edited\n")
    )
    assert cache.get("keep-dial") is None
    path.write_text(before)
    assert cache.get("keep-dial") is not None
    path.unlink()
    assert cache.get("keep-dial") is None  # a file it read is gone


@pytest.mark.parametrize(
    "edited", ["chapter_code/fake_panel_source.py", "bookbuild/site/panels.py"]
)
def test_a_comment_in_a_python_source_changes_no_computation_so_the_entry_stays(
    fake_root: Path, edited: str
) -> None:
    cache = stored(fake_root)
    path = fake_root / edited
    path.write_text(
        path.read_text().rstrip("\n")
        + "  # a comment at the end of a line\n\n# and one more\n"
    )
    assert cache.get("keep-dial") is not None
    if edited.startswith("chapter_code"):  # (the other holds no code, only a comment)
        path.write_text(
            "# a new line above the code moves its line numbers\n" + path.read_text()
        )
        assert cache.get("keep-dial") is None


def test_a_lab_marker_in_a_listing_changes_no_computation_so_the_entry_stays(
    fake_root: Path,
) -> None:
    cache = stored(fake_root)
    module = fake_root / "chapter_code" / "fake_panel_source.py"
    module.write_text("### BEGIN SOLUTION\nWEIGHT = 1.0\n### END SOLUTION\n")
    assert cache.get("keep-dial") is not None


def test_another_python_pytorch_numpy_or_matplotlib_recomputes_it(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = stored(fake_root)
    for name in ["python", *panels.CACHE_DISTRIBUTIONS]:
        changed = dict(panels._environment(), **{name: "0.0.0"})
        monkeypatch.setattr(panels, "_environment", lambda changed=changed: changed)
        assert cache.get("keep-dial") is None, name
    monkeypatch.undo()
    assert cache.get("keep-dial") is not None


@pytest.mark.parametrize(
    "damage",
    [
        "png bytes changed",
        "png missing",
        "entry cut short",
        "entry not an object",
        "data edited",
        "script json edited",
    ],
)
def test_a_damaged_entry_is_recomputed_never_used(fake_root: Path, damage: str) -> None:
    cache = stored(fake_root)
    folder = fake_root / "_build" / "panel-cache"
    if damage == "png bytes changed":
        (folder / "keep-dial.png").write_bytes(b"other bytes")
    elif damage == "png missing":
        (folder / "keep-dial.png").unlink()
    elif damage == "entry cut short":
        text = (folder / "keep-dial.json").read_text()
        (folder / "keep-dial.json").write_text(text[: len(text) // 2])
    elif damage == "entry not an object":
        (folder / "keep-dial.json").write_text("[1, 2]")
    else:  # still valid JSON, every digest of a source file still matching
        entry = json.loads((folder / "keep-dial.json").read_text())
        if damage == "data edited":
            entry["data"]["title"] = "Another title"
        else:
            entry["json"] = entry["json"].replace("T", "U")
        (folder / "keep-dial.json").write_text(json.dumps(entry))
    assert cache.get("keep-dial") is None


SPHINX_CONF = 'extensions = ["bookbuild.site.panels"]\nexclude_patterns = ["_build"]\n'


def build_panel_page(src: Path) -> str:
    """Build a one-page Sphinx project holding the keep-dial panel, in this process,
    afresh; its HTML."""
    from sphinx.application import Sphinx

    out = src / "_build" / "html"
    app = Sphinx(
        str(src),
        str(src),
        str(out),
        str(src / "_build" / "doctrees"),
        "html",
        status=None,
        warning=None,
        freshenv=True,
    )
    app.build(force_all=True)
    assert app.statuscode == 0
    return (out / "index.html").read_text(encoding="utf-8")


def panel_html(page: str) -> str:
    """The panel's element on a page, from its start to the end of its data."""
    start = page.index('id="panel-keep-dial"')
    return page[
        start : page.index("</script>", page.index('class="book-panel-data"', start))
    ]


def test_a_page_read_again_takes_the_panel_from_the_cache_and_renders_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chapter_code.panels.data as data
    import chapter_code.panels.figures as figures

    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    (tmp_path / "conf.py").write_text(SPHINX_CONF)
    (tmp_path / "index.rst").write_text("Panel\n=====\n\n.. book-panel:: keep-dial\n")
    computed: list[str] = []
    real_panel = data.panel
    monkeypatch.setattr(
        data, "panel", lambda name: computed.append(name) or real_panel(name)
    )
    drawn: list[str] = []
    real_draw = figures.static_figure
    monkeypatch.setattr(
        figures, "static_figure", lambda name: drawn.append(name) or real_draw(name)
    )

    first = build_panel_page(tmp_path)
    png = tmp_path / "_build" / "panels" / "keep-dial.png"
    first_png = png.read_bytes()
    assert (computed, drawn) == (["keep-dial"], ["keep-dial"])
    assert (tmp_path / "_build" / "panel-cache" / "keep-dial.json").is_file()

    png.unlink()  # the figure beside the output is written again from the cache
    second = build_panel_page(tmp_path)
    # nothing computed or drawn again
    assert (computed, drawn) == (["keep-dial"], ["keep-dial"])
    assert panel_html(second) == panel_html(first)
    assert png.read_bytes() == first_png
    assert (
        'class="book-panel-data">' + data.panel_json("keep-dial") + "</script>"
        in second
    )


def test_the_gate_reads_a_kept_panel_from_the_cache_and_computes_the_others(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bookbuild.gate import pagecontent
    from chapter_code.panels import data

    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    (fake_root / "book").mkdir()
    (fake_root / "book" / "ch.md").write_text(
        "# Ch\n\n```{book-panel} keep-dial\n```\n\n```{book-panel} probe\n```\n"
    )
    probe = {"title": "Probe", "beats": [{"text": "One beat."}]}
    monkeypatch.setitem(data.PANELS, "probe", lambda: json.loads(json.dumps(probe)))
    stored(fake_root)
    kept, computed = pagecontent.panels(fake_root, "book/ch")
    # what the cache holds, not what the panel would compute today
    assert kept == {"panel": "keep-dial", "data": {"title": "T"}}
    assert computed["panel"] == "probe"
    assert computed["data"]["title"] == "Probe"
    assert computed["data"]["beats"][0]["words"] == 2
    # a file it was computed from changed: computed again, as the page will be
    (fake_root / "chapter_code" / "fake_panel_source.py").write_text("WEIGHT = 2.0\n")
    again, _ = pagecontent.panels(fake_root, "book/ch")
    assert again == {
        "panel": "keep-dial",
        "data": json.loads(data.panel_json("keep-dial")),
    }
