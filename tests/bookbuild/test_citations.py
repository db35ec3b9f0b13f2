"""The bibliography: complete entries without raw TeX, the source documents cited only
beside their numbers, and the label, shorthand and ordering styles of
bookbuild/site/citations.py."""

from __future__ import annotations

import re

import pytest
from pybtex.database import Entry, Person, parse_file

from bookbuild.build import ROOT
from bookbuild.site import citations

BOOK = ROOT / "book"
SOURCE_KEYS = {"srctextbook", "srcworkshop", "srcgated"}
CITE = re.compile(r"\{cite:[a-z]+\}`([^`]+)`")

#: Where a page may cite one of the three source documents: the sections (by heading)
#: and exercises (by label) that set a source's numbers or setup beside this build's.
#: Anywhere else a fact needs its paper, and a mention of a source needs no citation (it
#: is not published; the bibliography says what it is).
BESIDE_THE_SOURCES = {
    "recurrence": {"The vanilla RNN"},
    "gradients": {
        "How much signal reaches the first input",
        "One hidden unit: the bound and the state",
        "Clipping the gradient",
        "A trained network: gradient against distance",
    },
    "gated": {
        "The gradient at the first input, LSTM against RNN",
        "The memory test",
        "Inside the trained LSTMs: the forget gates",
    },
    "language-models": {
        "Two corpora, pinned by hash",
        "Beside the textbook's run",
        "A sample",
        "Beside the workshop's table",
        "Character and word perplexity",
        "The LSTM's forget gates, and the workshop's measurement",
        "solution of ex-l-conclude",
    },
    "generating": {
        "One set of logits at three temperatures",
        "Checking a sampler by counting",
        "Samples from the trained models",
        "ex-s-check",
    },
    "depth": {
        "Bidirectional layers",
        "Scratch against `nn.LSTM`: the initialisation",
        "Beside the source's scoreboard",
        "Beside the source's scale study",
        # its models' sizes beside the source's three
        "The same study on one large GPU",
    },
    "beyond": {"This book beside the sources"},
}


def contexts(text: str) -> list[tuple[str, str]]:
    """(context, line) for each prose line of a MyST page: the context is the latest
    section heading, or the label of the exercise (``ex-...``) or solution (``solution
    of ex-...``) the line is in. Code cells skipped."""
    out: list[tuple[str, str]] = []
    context, in_code = "", False
    for line in text.splitlines():
        if in_code:
            in_code = line.strip() != "```"
            continue
        if line.startswith("```{code-cell}"):
            in_code = True
            continue
        if heading := re.match(r"#{1,4} (.+)", line):
            context = heading.group(1).strip()
        elif label := re.match(r":label: (ex-[\w-]+)", line):
            context = label.group(1)
        elif solution := re.match(r"`{3,}\{solution-start\} (ex-[\w-]+)", line):
            context = f"solution of {solution.group(1)}"
        out.append((context, line))
    return out


def source_citations() -> list[tuple[str, str, str]]:
    """(page, context, line) of every citation of a source document in the book."""
    found = []
    for path in sorted(BOOK.glob("*.md")):
        for context, line in contexts(path.read_text(encoding="utf-8")):
            for keys in CITE.findall(line):
                if SOURCE_KEYS & {k.strip() for k in keys.split(",")}:
                    found.append((path.stem, context, line))
    return found


def test_the_source_documents_are_cited_only_beside_their_numbers() -> None:
    found = source_citations()
    assert len(found) > 20
    stray = [
        f"{page} [{context}]: {line.strip()[:100]}"
        for page, context, line in found
        if context not in BESIDE_THE_SOURCES.get(page, set())
    ]
    assert stray == [], (
        "a source document cited outside a comparison with its numbers:\n"
        + "\n".join(stray)
    )


def test_every_place_allowed_to_cite_a_source_does_and_states_a_source_number() -> None:
    from bookbuild.lint.prose import _literal_pattern, page_literals

    cited = {(page, context) for page, context, _ in source_citations()}
    for page, allowed in BESIDE_THE_SOURCES.items():
        text = (BOOK / f"{page}.md").read_text(encoding="utf-8")
        lines, declared = (
            contexts(text),
            [lit for lit in page_literals(text)[0] if isinstance(lit, str)],
        )
        for context in allowed:
            assert (page, context) in cited, (
                f"{page} [{context}] cites no source: drop it from the list"
            )
            body = "\n".join(line for c, line in lines if c == context)
            literal = (
                "{lit}" in body
                or "{lit-math}" in body
                or any(_literal_pattern(lit).search(body) for lit in declared)
            )  # book: literals
            assert literal, (
                f"{page} [{context}] sets no source number ({{lit}} or a declared "
                "literal)"
            )


def test_contexts_follow_headings_and_exercise_labels_and_skip_code() -> None:
    page = (
        "# T\n\n## A\ntext {cite:p}`srcgated`\n```{code-cell} ipython3\n# "
        "B\n```\n:label: ex-x\nmore\n"
    )
    assert [c for c, _ in contexts(page)] == ["T", "T", "A", "A", "ex-x", "ex-x"]


BIB = {name: parse_file(str(BOOK / name)) for name in ("references.bib", "sources.bib")}
#: The BibTeX a rendered entry could show as raw text: commands other than accents,
#: math, unescaped specials.
RAW_TEX = re.compile(r"\\(?![\"'`^~=.]|[cvuHk]\{|ss\b|o\b|O\b|&|_)[A-Za-z]+|\$")
VENUE = (
    "journal",
    "booktitle",
    "publisher",
    "school",
    "institution",
    "howpublished",
    "eprint",
)


@pytest.mark.parametrize("key", sorted(BIB["references.bib"].entries))
def test_a_paper_entry_is_complete_and_plain(key: str) -> None:
    entry = BIB["references.bib"].entries[key]
    assert entry.persons.get("author") or entry.persons.get("editor"), (
        f"{key}: no author"
    )
    for name in ("title", "year"):
        assert entry.fields.get(name), f"{key}: no {name}"
    assert re.fullmatch(r"\d{4}", entry.fields["year"]), (
        f"{key}: year {entry.fields['year']!r}"
    )
    assert any(entry.fields.get(name) for name in VENUE), (
        f"{key}: no venue, publisher or archive"
    )
    for name, value in entry.fields.items():
        assert not RAW_TEX.search(value), (
            f"{key}.{name} holds TeX a reader would see: {value!r}"
        )


@pytest.mark.parametrize("key", sorted(SOURCE_KEYS))
def test_a_source_entry_says_what_it_is_and_has_no_date(key: str) -> None:
    entry = BIB["sources.bib"].entries[key]
    assert "year" not in entry.fields  # it has none; "n.d." is not a date
    assert entry.fields[citations.SHORTHAND]
    assert "not published" in entry.fields["howpublished"]
    assert set(BIB["sources.bib"].entries) == SOURCE_KEYS
    assert not SOURCE_KEYS & set(BIB["references.bib"].entries)


def test_every_cited_key_is_in_a_bibliography_file() -> None:
    known = set(BIB["references.bib"].entries) | set(BIB["sources.bib"].entries)
    pages = [path.read_text(encoding="utf-8") for path in BOOK.glob("*.md")]
    cited = {
        k.strip()
        for page in pages
        for keys in CITE.findall(page)
        for k in keys.split(",")
    }
    assert cited - known == set()


def entry(authors: list[str], year: str | None = "1997", **fields: str) -> Entry:
    persons = {"author": [Person(a) for a in authors]}
    return Entry(
        "article",
        fields={"title": "T", **({"year": year} if year else {}), **fields},
        persons=persons,
    )


def test_a_shorthand_is_the_label_and_capitalised_in_the_list() -> None:
    assert citations.author_year_label(
        entry([], None, shorthand="sequence-models workshop")
    ) == ("Sequence-models workshop")


def test_an_entry_without_year_or_shorthand_is_an_error_not_n_d() -> None:
    with pytest.raises(ValueError, match="no year"):
        citations.author_year_label(entry(["Elman, Jeffrey L."], None))


def test_labels_file_by_author_then_year_ignoring_accents_and_case() -> None:
    labels = [
        "Bengio et al., 2003",
        "Pöppel, 2024",
        "Bengio, 1990",
        "Bengio et al., 1994",
        "de Freitas, 2000",
        "Bengio and Simard, 1999",
        "Poole, 2020",
        "RNN textbook chapter",
    ]
    assert sorted(labels, key=citations.label_sort_key) == [
        "Bengio, 1990",
        "Bengio and Simard, 1999",
        "Bengio et al., 1994",
        "Bengio et al., 2003",
        "de Freitas, 2000",
        "Poole, 2020",
        "Pöppel, 2024",
        "RNN textbook chapter",
    ]


def test_the_styles_format_the_book_s_entries_in_order() -> None:
    import pybtex.plugin

    citations.register()
    style = pybtex.plugin.find_plugin("pybtex.style.formatting", citations.STYLE)()
    for name, data in BIB.items():
        formatted = list(style.format_entries(data.entries.values()))
        labels = [f.label for f in formatted]
        assert labels == sorted(labels, key=citations.label_sort_key), name
        assert len(set(labels)) == len(labels), name
        for f in formatted:
            text = f.text.render_as("text")
            assert "n.d." not in text, (f.key, text)
            assert not RAW_TEX.search(text), (f.key, text)


def test_two_works_of_the_same_authors_and_year_get_a_and_b() -> None:
    import pybtex.plugin

    citations.register()
    labels = pybtex.plugin.find_plugin("pybtex.style.labels", citations.STYLE)()
    two = [
        entry(["Elman, Jeffrey L."], title="A"),
        entry(["Elman, Jeffrey L."], title="B"),
    ]
    assert list(labels.format_labels(two)) == ["Elman, 1997a", "Elman, 1997b"]


def test_the_bibliography_page_lists_the_two_files_apart() -> None:
    page = (BOOK / "bibliography.md").read_text()
    assert "```{bibliography} references.bib" in page
    assert "```{bibliography} sources.bib" in page


def cite(role: str, keys: list[str], pre: str = "", post: str = "") -> str:
    """What ``{cite:<role>}`keys``` shows, as plain text (the link is left out)."""
    import pybtex.plugin
    from sphinxcontrib.bibtex import plugin as bibtex_plugin
    from sphinxcontrib.bibtex.style.referencing import format_references
    from sphinxcontrib.bibtex.style.template import SphinxReferenceInfo

    citations.register()
    references = bibtex_plugin.find_plugin(
        "sphinxcontrib.bibtex.style.referencing", citations.STYLE
    )()
    entries = pybtex.plugin.find_plugin("pybtex.style.formatting", citations.STYLE)()
    cited = []
    for key in keys:
        found = (
            BIB["sources.bib"].entries.get(key) or BIB["references.bib"].entries[key]
        )
        info = SphinxReferenceInfo(
            builder=None,
            fromdocname="a",
            todocname="b",
            citation_id=key,
            title=None,
            pre_text=pre,
            post_text=post,
        )
        cited.append((found, next(iter(entries.format_entries([found]))), info))
    return str(format_references(references, role, cited))


@pytest.mark.parametrize(
    ("role", "keys", "post", "shown"),
    [
        ("p", ["elman1990"], "", "[Elman, 1990]"),
        ("t", ["elman1990"], "", "Elman [1990]"),
        (
            "p",
            ["hochreiter1997", "gers2000"],
            "",
            "[Hochreiter and Schmidhuber, 1997; Gers et al., 2000]",
        ),
        ("p", ["srcgated"], "", "[gated-RNN textbook section]"),
        (
            "t",
            ["srcgated"],
            "",
            "gated-RNN textbook section",
        ),  # no empty brackets where there is no year
        ("t", ["srcworkshop"], "its lab", "sequence-models workshop [its lab]"),
        (
            "p",
            ["pascanu2013", "srctextbook"],
            "",
            "[Pascanu et al., 2013; RNN textbook chapter]",
        ),
    ],
)
def test_citations_show_author_and_year_or_the_shorthand(
    role: str, keys: list[str], post: str, shown: str
) -> None:
    assert cite(role, keys, post=post) == shown
