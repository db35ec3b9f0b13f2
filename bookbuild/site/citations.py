"""The bibliography's styles: author-year labels, an ordered list, and shorthands for
the source documents.

Part of :mod:`bookbuild.site` (which calls :func:`register`). Three pybtex
plugins and one sphinxcontrib-bibtex referencing style, all named
``book_author_year`` (``_config.yml``: ``bibtex_default_style`` and
``bibtex_reference_style``):

- **labels**: the list at the end uses the labels the citations in the text show
  ("Elman, 1990"; "Hochreiter and Schmidhuber, 1997"; "Bengio et al., 1994"),
  with "a", "b" for two works of the same authors and year;
- **sorting**: the list is ordered as a reader looks a label up, by first author
  (accents and case ignored), then the co-author part of the label, then year;
- **shorthand**: an entry with a ``shorthand`` field (the book's three source
  documents, which have no author and no date) is cited and listed by that
  shorthand, never as "n.d.": ``{cite:p}`` gives "(RNN textbook chapter)",
  ``{cite:t}`` "RNN textbook chapter".
"""

from __future__ import annotations

import codecs
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

SHORTHAND = "shorthand"
STYLE = "book_author_year"


def plain(latex: str) -> str:
    """A BibTeX name or year as plain text: accents decoded, braces dropped."""
    import latexcodec  # noqa: F401  (registers the "ulatex" codec; installed with sphinxcontrib-bibtex)

    return codecs.decode(latex, "ulatex").replace("{", "").replace("}", "")


def author_year_label(entry: Any) -> str:
    """``Elman, 1990``; ``Hochreiter and Schmidhuber, 1997``; ``Bengio et al., 1994``; a
    shorthand as it stands."""
    if SHORTHAND in entry.fields:
        shorthand = plain(entry.fields[SHORTHAND])
        return shorthand[:1].upper() + shorthand[1:]
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    surnames = [plain(" ".join(p.prelast_names + p.last_names)) for p in persons]
    if not surnames:
        who = plain(
            entry.fields.get("organization", entry.fields.get("title", entry.key))
        )
    elif len(surnames) == 1:
        who = surnames[0]
    elif len(surnames) == 2:
        who = f"{surnames[0]} and {surnames[1]}"
    else:
        who = f"{surnames[0]} et al."
    if "year" not in entry.fields:
        raise ValueError(
            f"bibliography entry {entry.key!r} has no year (give it one, or a "
            "shorthand)"
        )
    return f"{who}, {plain(entry.fields['year'])}"


def folded(text: str) -> str:
    """``text`` for ordering: accents dropped, case folded ("Pöppel" files as
    "poppel")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def label_sort_key(label: str) -> tuple[str, str]:
    """Where a label files: by its author part, then its year ("Bengio, 1990" < "Bengio
    and X, 1990" < "Bengio et al., 1994" < "Bengio et al., 2003"); the tests check the
    rendered list with this same key."""
    who, _, year = label.rpartition(", ")
    if not who:  # a shorthand: no year
        who, year = label, ""
    return folded(who), year


def sorting_key(entry: Any) -> tuple[str, str, str]:
    return (
        *label_sort_key(author_year_label(entry)),
        folded(plain(entry.fields.get("title", ""))),
    )


_registered = False


def register() -> None:
    """Register the plugins (once per process; Sphinx's parallel workers import this
    module again)."""
    global _registered
    if _registered:
        return
    from pybtex.plugin import register_plugin
    from pybtex.richtext import Text
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle
    from pybtex.style.sorting import BaseSortingStyle
    from pybtex.style.template import field, first_of, join, node, optional
    from sphinxcontrib.bibtex import plugin as bibtex_plugin
    from sphinxcontrib.bibtex.style.referencing import BracketStyle
    from sphinxcontrib.bibtex.style.referencing.author_year import (
        AuthorYearReferenceStyle,
    )
    from sphinxcontrib.bibtex.style.referencing.basic_author_year import (
        BasicAuthorYearParentheticalReferenceStyle,
        BasicAuthorYearTextualReferenceStyle,
    )
    from sphinxcontrib.bibtex.style.template import (
        join2,
        post_text,
        pre_text,
        reference,
    )

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):  # type: ignore[no-untyped-def]
            entries = list(sorted_entries)
            labels = [author_year_label(e) for e in entries]
            repeated = {label for label, n in Counter(labels).items() if n > 1}
            seen: Counter[str] = Counter()
            for entry, label in zip(entries, labels, strict=True):
                # same authors, same year: 1997a, 1997b
                if label in repeated and SHORTHAND not in entry.fields:
                    seen[label] += 1
                    label = label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
                yield label

    class AuthorYearSorting(BaseSortingStyle):
        def sorting_key(self, entry):  # type: ignore[no-untyped-def]
            return sorting_key(entry)

    class AuthorYearStyle(UnsrtStyle):
        default_label_style = STYLE
        default_sorting_style = STYLE

    shorthand = field(SHORTHAND, raw=True)

    @dataclass
    class Parenthetical(BasicAuthorYearParentheticalReferenceStyle):
        """[Elman, 1990]; [RNN textbook chapter]."""

        def inner(self, role_name: str):  # type: ignore[no-untyped-def]
            return first_of[
                optional[
                    join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
                        pre_text, reference[shorthand], post_text
                    ]
                ],
                super().inner(role_name),
            ]

    @node
    def notes(children, data, left="[", right="]", sep=", "):  # type: ignore[no-untyped-def]
        """A textual citation's pre- and post-text in brackets, or nothing when it has
        none."""
        info = data["reference_info"]
        given = [text for text in (info.pre_text, info.post_text) if text]
        return Text(left, sep.join(given), right) if given else Text()

    @dataclass
    class Textual(BasicAuthorYearTextualReferenceStyle):
        """Elman [1990]; RNN textbook chapter."""

        def inner(self, role_name: str):  # type: ignore[no-untyped-def]
            return first_of[
                optional[
                    join(sep=self.text_reference_sep)[reference[shorthand], notes]
                ],
                super().inner(role_name),
            ]

    @dataclass
    class References(AuthorYearReferenceStyle):
        """sphinxcontrib-bibtex's author-year style, with "; " between the references of
        one citation (its ", " also separates author from year) and the shorthand of an
        entry that has one in place of its author and year."""

        def __post_init__(self) -> None:
            self.bracket_parenthetical = BracketStyle(sep="; ")
            super().__post_init__()
            for i, style in enumerate(self.styles):
                kind = {
                    BasicAuthorYearParentheticalReferenceStyle: Parenthetical,
                    BasicAuthorYearTextualReferenceStyle: Textual,
                }.get(type(style))
                if kind is not None:
                    self.styles[i] = kind(
                        **{k: getattr(style, k) for k in style.__dataclass_fields__}
                    )
            self.role_style.clear()
            self.role_style.update(
                (name, s) for s in self.styles for name in s.role_names()
            )

    register_plugin("pybtex.style.labels", STYLE, AuthorYearLabels, force=True)
    register_plugin("pybtex.style.sorting", STYLE, AuthorYearSorting, force=True)
    register_plugin("pybtex.style.formatting", STYLE, AuthorYearStyle, force=True)
    bibtex_plugin.register_plugin(
        "sphinxcontrib.bibtex.style.referencing", STYLE, References, force=True
    )
    _registered = True
