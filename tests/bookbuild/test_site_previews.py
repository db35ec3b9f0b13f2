"""Tests for bookbuild.site.previews: what each kind of link target previews as, on the
markup Sphinx and the themes write; the template each page gets; and that its links and
images still point where they did.

The browser tests (tests/browser/test_previews.py) open the previews on the built
site."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bs4 import BeautifulSoup

from bookbuild.site import previews

BIBLIOGRAPHY = """<section id="bibliography"><span id="id1"></span><h1>Bibliography<a class="headerlink"
href="#bibliography" title="Link to this heading">#</a></h1>
<p>Every paper the book cites.</p>
<div role="list" class="citation-list">
<div class="citation" id="cite-elman1990" role="doc-biblioentry">
<span class="label"><span class="fn-bracket">[</span>Elman, 1990<span class="fn-bracket">]</span></span>
<p>Jeffrey L. Elman. Finding structure in time. <em>Cognitive Science</em>, 14(2):179–211, 1990.</p>
</div></div></section>"""  # noqa: E501  (HTML as the build writes it)

GLOSSARY = """<section id="glossary"><h1>Glossary</h1><dl class="simple glossary">
<dt id="term-gated-recurrent-unit">gated recurrent unit<a class="headerlink" href="#term-gated-recurrent-unit"
title="Link to this term">#</a></dt><dt id="term-GRU">GRU<a class="headerlink" href="#term-GRU">#</a></dt>
<dd><p>A gated cell with one state: <span class="math notranslate nohighlight">\\(h_t = u_t h_{t-1}\\)</span>.
See <a class="reference internal" href="gated.html#sec-m-gru"><span class="std std-ref">The GRU</span></a>.</p>
<p>A second paragraph.</p></dd></dl></section>"""  # noqa: E501  (HTML as the build writes it)

CHAPTER = """<section id="gated-memory"><span id="chap-gated"></span><h1><span class="section-number">3. </span>Gated
memory<a class="headerlink" href="#gated-memory">#</a></h1>
<p><strong>Where we are.</strong> The vanilla RNN of <a class="reference internal" href="recurrence.html#chap-r">
<span class="std std-ref">Recurrence</span></a>.</p>
<p>Second paragraph.</p>
<section id="the-lstm-cell"><span id="sec-m-lstm"></span><h2>The LSTM cell<a class="headerlink"
href="#the-lstm-cell">#</a></h2>
<p>The LSTM <span class="bibtex-citation" id="id3">[<a class="reference internal" href="bibliography.html#cite-h"
title="Sepp Hochreiter.">Hochreiter, 1997</a>]</span> and <span class="claim"><span class="claim-mark"
tabindex="0" aria-describedby="c1">a claim</span><span class="claim-tip" id="c1">its check</span></span>.</p>
<div class="math notranslate nohighlight" id="equation-eq-m-lstm">
<span class="eqno">(3.1)<a class="headerlink" href="#equation-eq-m-lstm" title="Link to this equation">#</a></span>
\\[c_t = f_t \\odot c_{t-1}\\]</div>
<figure class="align-default" id="fig-m-lstm-cell"><a class="reference internal image-reference"
href="../_images/cell.png"><img alt="Schematic of one step." src="../_images/cell.png" style="width: 520px;"/></a>
<figcaption><p><span class="caption-number">Fig. 3.1 </span><span class="caption-text">One LSTM step.</span>
<a class="headerlink" href="#fig-m-lstm-cell">#</a></p></figcaption></figure>
<div class="pst-scrollable-table-container"><table class="table" id="tab-m-gates"><caption><span
class="caption-number">Table 3.1 </span><span class="caption-text">The gates.</span></caption>
<tbody><tr><td>big</td></tr></tbody></table></div>
<div class="exercise admonition" id="ex-m-gru"><p class="admonition-title"><span class="caption-number">Exercise
3.1 </span> (The GRU by hand)</p><section id="ex-m-gru-exercise-content"><p>Run both loops.</p><p>Then more.</p>
</section></div>
<div class="highlight-python notranslate" id="listing-lstm-step"><div class="highlight"><pre>def step(x):
    a = 1
    b = 2
    c = 3
    d = 4
    e = 5
    f = 6
    g = 7
    return x</pre></div></div>
<p>See <a class="reference internal" href="#sec-m-lstm"><span>the cell</span></a>,
<a class="reference internal" href="#equation-eq-m-lstm">Eq. 3.1</a>, <a class="reference internal"
href="glossary.html#term-GRU">GRU</a>, <a class="reference internal" href="bibliography.html#cite-elman1990">Elman,
1990</a>, <a class="reference internal" href="#nowhere">no target</a> and
<a class="reference internal" href="bibliography.html#cite-elman1990">again</a>.</p>
</section></section>"""  # noqa: E501  (HTML as the build writes it)


def page(body: str) -> str:
    return (
        "<html><head></head><body><div><article "
        f'class="bd-article">{body}</article></div>\n</body></html>\n'
    )


def collected(body: str, name: str) -> dict[str, dict[str, str]]:
    found = previews.collect(body, name)
    json.dumps(found)  # what is stored between builds
    return found


def soup(fragment: str) -> BeautifulSoup:
    return BeautifulSoup(fragment, "html.parser")


def template_entries(text: str) -> list:  # type: ignore[type-arg]
    """The previews in a page's template (BeautifulSoup keeps a template's content as
    text, as a browser keeps it inert)."""
    match = re.search(
        rf'<template id="{previews.TEMPLATE_ID}">(.*?)</template>', text, re.S
    )
    return soup(match.group(1)).select("div.link-tip-body") if match else []


def test_a_citation_previews_as_its_label_and_entry() -> None:
    found = collected(BIBLIOGRAPHY, "book/bibliography.html")
    assert found["kinds"]["cite-elman1990"] == "citation"
    preview = soup(found["html"]["cite-elman1990"])
    assert preview.select_one("p.link-tip-head").get_text() == "Elman, 1990"
    assert "Finding structure in time" in preview.get_text()


def test_a_term_previews_with_its_other_names_and_first_paragraph_and_links_kept() -> (
    None
):
    found = collected(GLOSSARY, "book/glossary.html")
    # either name, one preview
    assert found["html"]["term-GRU"] == found["html"]["term-gated-recurrent-unit"]
    preview = soup(found["html"]["term-gated-recurrent-unit"])
    assert (
        preview.select_one("p.link-tip-head").get_text() == "gated recurrent unit, GRU"
    )  # no "#" anchors
    assert "A second paragraph" not in preview.get_text()
    # left for the math pass to typeset with the page's formulas
    assert "\\(h_t" in preview.get_text()
    link = preview.select_one("a")
    assert link["href"] == "gated.html#sec-m-gru"
    assert link["tabindex"] == "-1"


def test_sections_figures_tables_equations_exercises_listings_and_the_page() -> None:
    found = collected(CHAPTER, "book/gated.html")
    kinds = found["kinds"]
    # the label's empty span names its section
    assert kinds["sec-m-lstm"] == kinds["the-lstm-cell"] == "section"
    assert kinds["chap-gated"] == "section"
    assert kinds[""] == "page"
    assert kinds["equation-eq-m-lstm"] == "equation"
    assert kinds["fig-m-lstm-cell"] == "figure"
    assert kinds["tab-m-gates"] == "table"
    assert kinds["ex-m-gru"] == "exercise"
    assert kinds["listing-lstm-step"] == "listing"
    assert "id3" not in kinds  # a citation's own span previews nothing
    section = soup(found["html"]["sec-m-lstm"])
    assert section.select_one("p.link-tip-head").get_text() == "The LSTM cell"
    assert "its check" not in section.get_text()  # a claim's own preview is left out
    page_preview = soup(found["html"][""])
    assert "Where we are" in page_preview.get_text()
    assert "Second paragraph" not in page_preview.get_text()
    figure = soup(found["html"]["fig-m-lstm-cell"])
    assert figure.img["src"] == "../_images/cell.png"
    assert "style" not in figure.img.attrs
    assert figure.img["loading"] == "lazy"
    assert "One LSTM step" in figure.select_one("div.link-tip-caption").get_text()
    assert figure.find("figcaption") is None  # valid outside a figure
    assert "big" not in found["html"]["tab-m-gates"]  # a table previews as its caption
    assert "\\[c_t" in found["html"]["equation-eq-m-lstm"]
    assert "(3.1)" in found["html"]["equation-eq-m-lstm"]
    assert "Then more" not in found["html"]["ex-m-gru"]
    listing = soup(found["html"]["listing-lstm-step"]).pre.get_text().splitlines()
    assert len(listing) == previews.LISTING_LINES + 1
    assert listing[-1] == "…"


def test_a_preview_adds_no_ids_and_no_tab_stops() -> None:
    for body, name in (
        (CHAPTER, "book/gated.html"),
        (GLOSSARY, "book/glossary.html"),
        (BIBLIOGRAPHY, "book/bibliography.html"),
    ):
        for fragment in collected(body, name)["html"].values():
            parsed = soup(fragment)
            assert parsed.find(id=True) is None
            assert parsed.find(attrs={"tabindex": "0"}) is None
            assert parsed.find(attrs={"title": True}) is None
            assert parsed.select("a.headerlink") == []
            assert all(a.get("tabindex") == "-1" for a in parsed.find_all("a"))


def all_collected() -> dict[str, dict[str, dict[str, str]]]:
    return {
        "book/gated.html": collected(CHAPTER, "book/gated.html"),
        "book/glossary.html": collected(GLOSSARY, "book/glossary.html"),
        "book/bibliography.html": collected(BIBLIOGRAPHY, "book/bibliography.html"),
    }


def test_each_page_gets_one_template_of_the_previews_its_links_need() -> None:
    text = previews.attach(page(CHAPTER), "book/gated.html", all_collected())
    assert text.count(f'<template id="{previews.TEMPLATE_ID}">') == 1
    assert text.index("<template") > text.index("</article>")
    entries = template_entries(text)
    hrefs = [e["data-href"] for e in entries]
    # in the order first linked, once each; links to targets nobody collected
    # ("#nowhere", pages not built) have none
    assert hrefs == [
        "#sec-m-lstm",
        "#equation-eq-m-lstm",
        "glossary.html#term-GRU",
        "bibliography.html#cite-elman1990",
    ]
    assert {e["data-kind"] for e in entries} == {
        "section",
        "equation",
        "term",
        "citation",
    }
    # a page with its template stays
    assert previews.attach(text, "book/gated.html", all_collected()) == text


def test_a_page_without_links_to_preview_is_unchanged() -> None:
    text = page("<p>No links.</p>")
    assert previews.attach(text, "book/x.html", all_collected()) == text


def test_links_in_a_preview_shown_in_another_folder_are_rebased() -> None:
    found = {"book/glossary.html": collected(GLOSSARY, "book/glossary.html")}
    text = page(
        '<p><a class="reference internal" '
        'href="book/glossary.html#term-gated-recurrent-unit">x</a></p>'
    )
    [entry] = template_entries(previews.attach(text, "index.html", found))
    assert entry.select_one("a")["href"] == "book/gated.html#sec-m-gru"


def test_hrefs_resolve_against_the_page_that_writes_them() -> None:
    assert previews.resolve("book/gated.html", "#sec") == ("book/gated.html", "sec")
    assert previews.resolve("book/gated.html", "bibliography.html#cite-x") == (
        "book/bibliography.html",
        "cite-x",
    )
    assert previews.resolve("book/gated.html", "../index.html") == ("index.html", "")


def test_the_collected_previews_are_read_back_by_page(tmp_path: Path) -> None:
    folder = tmp_path / previews.FOLDER / "book"
    folder.mkdir(parents=True)
    (folder / "gated.json").write_text(
        json.dumps(collected(CHAPTER, "book/gated.html"))
    )
    loaded = previews.load(tmp_path)
    assert list(loaded) == ["book/gated.html"]
    assert loaded["book/gated.html"]["kinds"]["sec-m-lstm"] == "section"


def build_finished_passes() -> list[tuple[int, str]]:
    """(priority, module) of the post-build passes over the pages, as bookbuild.site
    registers them."""
    from bookbuild.site import a11y, mathrender, speed

    passes: list[tuple[int, str]] = []

    class App:
        def connect(self, event: str, callback: object, priority: int = 500) -> None:
            if event == "build-finished":
                passes.append((priority, callback.__module__.rsplit(".", 1)[-1]))  # type: ignore[attr-defined]

    for module in (a11y, previews, speed, mathrender):
        module.connect(App())  # type: ignore[arg-type]
    return sorted(passes)


def test_the_speed_pass_runs_after_the_previews_so_one_build_leaves_their_figures_sized(
    tmp_path: Path,
) -> None:
    """A preview copies a figure or a listing into the page's template after Sphinx
    wrote the page; the speed pass (lazy, sized images; sized code blocks) must see it
    in the same build. Run before the previews, it left their images without a size
    until the next build rewrote the page (seen: a fresh build and the build after it
    gave different pages)."""
    from PIL import Image

    from bookbuild.site import speed

    order = [name for _, name in build_finished_passes()]
    assert order.index("previews") < order.index("speed") < order.index("mathrender"), (
        order
    )
    (tmp_path / "_images").mkdir()
    Image.new("RGB", (1040, 640)).save(tmp_path / "_images" / "cell.png")
    found = {"book/gated.html": collected(CHAPTER, "book/gated.html")}
    linking = CHAPTER.replace(
        '<a class="reference internal" href="#nowhere">',
        '<a class="reference internal" href="#fig-m-lstm-cell">',
    )

    # the passes that touch these pages, in their registered order
    def one_build(text: str) -> str:
        for name in order:
            if name == "previews":
                text = previews.attach(text, "book/gated.html", found)
            elif name == "speed":
                text = speed.speed_page(tmp_path, "book/gated.html", text)
        return text

    once = one_build(page(linking))
    [figure] = [e for e in template_entries(once) if e["data-kind"] == "figure"]
    image = figure.select_one("img")
    assert (image["width"], image["height"], image["decoding"]) == (
        "1040",
        "640",
        "async",
    )
    # the next build leaves the page as this one wrote it
    assert one_build(once) == once
