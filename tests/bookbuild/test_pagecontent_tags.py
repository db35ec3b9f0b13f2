"""The listings' cut is kept between builds: Sphinx parses a module text once, a changed
text is parsed again, and a damaged or read-only store only costs a parse."""

from __future__ import annotations

from pathlib import Path

import pytest
from sphinx import pycode

from bookbuild.gate import pagecontent

MODULE = 'def f(x):\n    """Twice."""\n    return 2 * x\n\n\ndef g():\n    return 1\n'


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path / "build"))
    pagecontent._tags.cache_clear()
    pagecontent._stored_tags.cache_clear()
    yield tmp_path
    pagecontent._tags.cache_clear()
    pagecontent._stored_tags.cache_clear()


def _new_process() -> None:
    pagecontent._tags.cache_clear()
    pagecontent._stored_tags.cache_clear()


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(pycode.ModuleAnalyzer, "for_string", refuse)


def test_a_module_text_is_parsed_once_across_builds(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = fresh / "mod.py"
    module.write_text(MODULE)
    first = pagecontent.listing_text(module, "f")
    assert first == 'def f(x):\n    """Twice."""\n    return 2 * x\n'
    assert (fresh / "build" / "engine" / pagecontent.TAGS_FILE).is_file()
    _new_process()
    with monkeypatch.context() as m:
        _no_parsing(m)
        assert pagecontent.listing_text(module, "f") == first
        assert pagecontent.listing_text(module, "g") == "def g():\n    return 1\n"


def test_a_changed_text_is_parsed_again_and_cut_at_its_new_lines(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = fresh / "mod.py"
    module.write_text(MODULE)
    pagecontent.listing_text(module, "g")
    module.write_text("import os\n\n\n" + MODULE.replace("return 1", "return os.sep"))
    _new_process()
    assert pagecontent.listing_text(module, "g") == "def g():\n    return os.sep\n"
    _new_process()
    with monkeypatch.context() as m:  # the new text's cut is stored too
        _no_parsing(m)
        assert pagecontent.listing_text(module, "g") == "def g():\n    return os.sep\n"


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", ""])
def test_a_damaged_store_costs_a_parse_not_a_failure(fresh: Path, damage: str) -> None:
    store = fresh / "build" / "engine" / pagecontent.TAGS_FILE
    store.parent.mkdir(parents=True)
    store.write_text(damage)
    module = fresh / "mod.py"
    module.write_text(MODULE)
    assert pagecontent.listing_text(module, "f").startswith("def f(x):")
    with pytest.raises(pagecontent.ListingError, match="defines no object 'h'"):
        pagecontent.listing_text(module, "h")


def test_the_store_keeps_only_the_newest_texts(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pagecontent, "TAGS_KEPT", 2)
    module = fresh / "mod.py"
    for n in range(4):
        module.write_text(MODULE + f"\n\ndef h{n}():\n    return {n}\n")
        pagecontent.listing_text(module, f"h{n}")
    _new_process()
    assert len(pagecontent._stored_tags()) == 2
