"""Tests for bookbuild.lint.prose_snapshot: what is kept of a page, and the refusal to
overwrite a pinned snapshot."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bookbuild.lint import prose_snapshot
from chapter_code.corpora import texts as corpora

PAGE = """---
jupytext:
  format_name: myst
---

(chap-x)=
# A title

Some prose with {term}`a gate <gate>` and {glue:text}`g_value` units.

```{code-cell} ipython3
:label: cell
print("code")
```

```{literalinclude} ../chapter_code/x.py
:pyobject: f
```

% a comment
````{exercise} An exercise title
:label: ex-x

Exercise body, $x^2$.
````

````{solution-start} ex-x
:class: dropdown
````

Solution text.

```{code-cell} ipython3
:label: sol
x = 1
```

````{solution-end}
````
"""


def test_page_prose_keeps_prose_and_drops_code_labels_and_options() -> None:
    text = prose_snapshot.page_prose(PAGE)
    assert text == (
        "# A title\n\nSome prose with a gate and # units.\n\nAn exercise title\n\n"
        "Exercise body, $x^2$.\n\nSolution text.\n"
    )


def test_a_pinned_snapshot_is_not_overwritten_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "prose.txt"
    path.write_text("old")
    pinned = hashlib.sha256(b"old").hexdigest()
    with pytest.raises(
        FileExistsError, match=r"prose.txt is the pinned snapshot .* --force"
    ):
        prose_snapshot.write_snapshot(path, "new", pinned)
    assert path.read_text() == "old"
    digest = prose_snapshot.write_snapshot(path, "new", pinned, force=True)
    assert path.read_text() == "new"
    assert digest == hashlib.sha256(b"new").hexdigest()
    # a file that is not the pinned snapshot (a draft) is simply replaced
    assert (
        prose_snapshot.write_snapshot(path, "newer", pinned)
        == hashlib.sha256(b"newer").hexdigest()
    )


def test_the_committed_snapshot_has_its_pinned_hash_and_a_changed_one_is_named(
    tmp_path: Path,
) -> None:
    text = corpora.book_prose_text()
    assert "Recurrence" in text
    assert "```" not in text
    assert "{code-cell}" not in text
    (tmp_path / corpora.BOOK_PROSE_FILE).write_text(text + "edited\n")
    with pytest.raises(
        corpora.CorpusError, match=r"book_prose.txt has SHA-256 .*git checkout"
    ):
        corpora.book_prose_text(tmp_path)
    with pytest.raises(corpora.CorpusError, match=r"book_prose.txt is missing"):
        corpora.book_prose_text(tmp_path / "nowhere")
