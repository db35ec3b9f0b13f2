// The book's formulas as SVG, typeset once at build time (bookbuild/site/mathrender.py runs this script).
//
// Usage: node mathjax_render.js MATHJAX_DIR < request.json > answer.json
//
// MATHJAX_DIR is the folder of the pinned sphinx-mathjax-offline wheel that holds MathJax 3.2.2
// (its node-main.js loads the components from beside itself; nothing is fetched). One process
// typesets the whole site. The request is
//   {"tex": {...MathJax tex options...}, "pages": [{"name": "book/x.html",
//            "formulas": [{"tex": "a+b", "display": false}, ...]}, ...]}
// and the answer
//   {"css": "...", "pages": [{"name": ..., "cache": "<svg id=...>...</svg>",
//            "formulas": ["<mjx-container ...>...</mjx-container>" | null, ...],
//            "errors": [{"index": 0, "message": "..."}]}]}
// Each formula is SVG output (glyphs drawn with currentColor, so dark mode recolours them) with
// MathJax's assistive MathML beside it for screen readers. The glyph shapes of a page are shared in
// one hidden <svg> (MathJax's "global" font cache), reset for every page. A formula MathJax rejects
// (a parse error, an undefined control sequence) comes back as an error, never as red text.
"use strict";

const fs = require("fs");
const path = require("path");

function fail(message) {
  process.stderr.write(`mathjax_render.js: ${message}\n`);
  process.exit(2);
}

const mathjaxDir = process.argv[2];
if (!mathjaxDir || !fs.existsSync(path.join(mathjaxDir, "node-main.js"))) {
  fail(`expected the MathJax folder holding node-main.js as the argument, got ${JSON.stringify(mathjaxDir)}`);
}

let request;
try {
  request = JSON.parse(fs.readFileSync(0, "utf8"));
} catch (error) {
  fail(`the request on stdin is not JSON: ${error.message}`);
}
if (!request || !Array.isArray(request.pages)) {
  fail("the request has no \"pages\" list");
}

// Strict TeX: without "noundefined" an unknown macro is an error instead of red text, and formatError
// turns every parse error into an exception, so no broken formula reaches a page unnoticed.
const tex = Object.assign({}, request.tex || {}, {
  packages: { "[-]": ["noundefined"] },
  formatError: (jax, error) => {
    throw error;
  },
});

require(path.join(mathjaxDir, "node-main.js"))
  .init({
    loader: { load: ["input/tex", "output/svg", "a11y/assistive-mml"] },
    tex: tex,
    svg: { fontCache: "global" },
    startup: { typeset: false },
  })
  .then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const output = MathJax.startup.output;
    const pages = request.pages.map((page) => {
      output.clearFontCache(); // one glyph cache per page: its ids are unique within the page
      const errors = [];
      const formulas = page.formulas.map((formula, index) => {
        try {
          return adaptor.outerHTML(MathJax.tex2svg(formula.tex, { display: !!formula.display }));
        } catch (error) {
          errors.push({ index: index, message: String((error && error.message) || error) });
          return null;
        }
      });
      const cache = output.svg("svg", { id: "MJX-SVG-global-cache", style: { display: "none" } }, [
        output.fontCache.getCache(),
      ]);
      return { name: page.name, cache: adaptor.outerHTML(cache), formulas: formulas, errors: errors };
    });
    const css = adaptor.textContent(MathJax.svgStylesheet());
    process.stdout.write(JSON.stringify({ css: css, pages: pages }));
  })
  .catch((error) => fail(`MathJax did not start: ${(error && error.stack) || error}`));
