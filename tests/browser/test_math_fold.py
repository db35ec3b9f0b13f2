"""The build folds MathJax's single-child groups (bookbuild/site/mathjax_render.js,
issue 28): the same drawing.

Every formula below is typeset twice, with MathJax's own SVG tree and with the folded
one, laid out on one page each in Chromium, and the two screenshots must be equal pixel
for pixel. The formulas cover what the book's TeX uses: every environment (``aligned``),
fractions, roots, big operators, delimiters, accents, arrows over symbols, fonts
(``\\mathbb``, ``\\mathcal``, ``\\operatorname``, ``\\text``), the book's macros,
numbered displays.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bookbuild.site import mathjax_source, mathrender

ROOT = Path(__file__).resolve().parents[2]
FORMULAS = [
    (r"h_t = \tanh(W_{hh} h_{t-1} + W_{xh} x_t + b_h)", True),
    (r"c_t = f_t \odot c_{t-1} + i_t \odot \tilde c_t", True),
    (
        r"\frac{\partial \ell}{\partial h_s} = \sum_{t=s}^{T} \frac{\partial "
        r"\ell_t}{\partial h_t}"
        r" \prod_{k=s+1}^{t} \frac{\partial h_k}{\partial h_{k-1}}",
        True,
    ),
    (
        r"\begin{aligned} z_t &= \sigma(W_z x_t + U_z h_{t-1}) \\ h_t &= (1 - "
        r"z_t) \odot h_{t-1}"
        r" + z_t \odot \hat h_t \end{aligned}",
        True,
    ),
    (
        r"\left\lVert \frac{\partial h_T}{\partial h_0} \right\rVert \le "
        r"\prod_{t=1}^{T}"
        r" \lVert \operatorname{diag}(1 - h_t^2) \rVert \, \lVert W \rVert",
        True,
    ),
    (
        r"p(x_{1:T}) = \prod_{t=1}^{T} p(x_t \mid x_{<t}) \approx "
        r"\exp\bigl(-\tfrac{1}{T}\textstyle\sum_t \ln q\bigr)",
        True,
    ),
    (
        r"\overrightarrow{h}_t \mapsto [\overrightarrow{h}_t; "
        r"\overleftarrow{h}_t] \in \mathbb{R}^{2H}",
        False,
    ),
    (r"\mathcal{U}\left(-\sqrt{\tfrac{1}{H}}, \sqrt{\tfrac{1}{H}}\right)", False),
    (
        r"\lceil \log_2 T \rceil \cdot \Delta \quad \text{steps, } \tau \to 0 "
        r"\Rightarrow \arg\max_{v} \theta_v",
        False,
    ),
    (
        r"\sigma(b_f)^{k} \approx e^{-k/\kappa}, \; \beta \ne \infty, \; "
        r"\gamma \pm \lambda \sim \nu",
        False,
    ),
    (
        r"\lvert \partial h_T / \partial h_s \rvert \ge \min(\delta, \bullet) "
        r"\times \cdots \dots",
        False,
    ),
    (
        r"\imath \leftarrow \max_{i} \bigl( \ell_i \bigr) \quad \sqrt[3]{x^{\top} A x}",
        False,
    ),
    # not in the book today: a fold that composes two transforms (order matters), and
    # stacked limits
    (r"x_{\raise{2pt}{y}} + x^{\raise{4pt}{k}}", False),
    (r"\sum\limits_{\substack{i < j \\ j \le T}} x_{ij}", True),
]


def book_tex() -> dict:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["sphinx"]["config"]["mathjax3_config"]["tex"]


def page_html(css: str, cache: str, formulas: list[str]) -> str:
    rows = "\n".join(f'<p style="margin:0 0 12px">{f}</p>' for f in formulas)
    return (
        f'<!DOCTYPE html><html><head><style id="MJX-SVG-styles">{css}</style>'
        "<style>body{margin:8px;font:16px "
        "serif;color:#222;background:#fff;width:900px}</style></head>"
        f"<body>{cache}{rows}</body></html>"
    )


@pytest.fixture(scope="module")
def both() -> dict[bool, dict]:
    node = mathrender.node_binary()
    if node is None:
        pytest.skip("no Node.js (`node`) on this machine")
    formulas = [mathrender.Formula(tex, display) for tex, display in FORMULAS]
    return {
        fold: mathrender.typeset(
            {"p.html": formulas}, book_tex(), mathjax_source(), node, fold=fold
        )
        for fold in (False, True)
    }


def test_folding_removes_groups_and_keeps_every_glyph(both: dict[bool, dict]) -> None:
    plain, folded = (both[f]["pages"]["p.html"]["formulas"] for f in (False, True))
    before = sum(f.count("<g") for f in plain)
    after = sum(f.count("<g") for f in folded)
    assert after < 0.6 * before, (before, after)
    for a, b in zip(plain, folded, strict=True):
        # the same glyphs, rules and text, in the same order; the same MathML for screen
        # readers
        assert re.findall(r'<use data-c="[^"]+"', a) == re.findall(
            r'<use data-c="[^"]+"', b
        )
        assert a.count("<rect") == b.count("<rect")
        assert a.split("<mjx-assistive-mml")[1] == b.split("<mjx-assistive-mml")[1]
    aligned = folded[3]
    # the structures MathJax's stylesheet selects stay groups
    assert 'data-mml-node="mtable"' in aligned


def test_folded_formulas_draw_the_same_pixels(both: dict[bool, dict], browser) -> None:  # type: ignore[no-untyped-def]
    from tests.browser.conftest import new_context

    shots = {}
    for fold, answer in both.items():
        page_answer = answer["pages"]["p.html"]
        context = new_context(
            browser, viewport={"width": 940, "height": 800}, device_scale_factor=2
        )
        page = context.new_page()
        page.set_content(
            page_html(answer["css"], page_answer["cache"], page_answer["formulas"])
        )
        shots[fold] = page.screenshot(full_page=True)
        context.close()
    assert len(shots[True]) > 10_000  # something was drawn
    assert shots[True] == shots[False]
