// The book's formulas as SVG, typeset once at build time (bookbuild/site/mathrender.py runs this script).
//
// Usage: node mathjax_render.js MATHJAX_DIR < request.json > answer.json
//
// MATHJAX_DIR is the folder of the pinned sphinx-mathjax-offline wheel that holds MathJax 3.2.2
// (its node-main.js loads the components from beside itself; nothing is fetched). One process
// typesets the whole site. The request is
//   {"tex": {...MathJax tex options...}, "pages": [{"name": "book/x.html",
//            "formulas": [{"tex": "a+b", "display": false}, ...]}, ...], "fold": true}
// ("fold": false keeps MathJax's groups as they are; the tests compare the two drawings)
// and the answer
//   {"css": "...", "pages": [{"name": ..., "cache": "<svg id=...>...</svg>",
//            "formulas": ["<mjx-container ...>...</mjx-container>" | null, ...],
//            "errors": [{"index": 0, "message": "..."}]}]}
// Each formula is SVG output (glyphs drawn with currentColor, so dark mode recolours them) with
// MathJax's assistive MathML beside it for screen readers. The glyph shapes of a page are shared in
// one hidden <svg> (MathJax's "global" font cache), reset for every page. A formula MathJax rejects
// (a parse error, an undefined control sequence) comes back as an error, never as red text.
//
// Fewer elements (issue 28: on a phone the long chapters spend seconds in their first style and
// layout, and MathJax's SVG is a third of their elements): a <g> that holds exactly one drawn element
// and nothing else is folded into that element, its transform written in front of the element's own
// (the same drawing: SVG applies a transform list left to right from the outside in) and its other
// attributes moved down. A <g> is kept when its attributes clash with the element's, when it or its
// parent is one of the structures MathJax's stylesheet selects with a child combinator (tables,
// errors, actions), and over a nested <svg> (a transform there is not SVG 1.1).
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

// MathJax's SVG stylesheet selects children of these nodes ("g[data-mml-node=mtable] > g > svg", ...).
const STRUCTURAL = new Set(["merror", "mtable", "mtr", "mlabeledtr", "mtd", "maction"]);
const DRAWN = new Set(["g", "use", "path", "rect", "line", "text"]);
// MathJax's bookkeeping on a group: dropped with the group (no script reads it on the book's pages).
const BOOKKEEPING = new Set(["data-mml-node", "data-mjx-texclass", "data-semantic-type"]);

function isElement(adaptor, node) {
  const kind = adaptor.kind(node);
  return typeof kind === "string" && !kind.startsWith("#");
}

function foldableChild(adaptor, group, parent) {
  if (adaptor.kind(group) !== "g") return null;
  const kids = adaptor.childNodes(group);
  if (kids.length !== 1 || !isElement(adaptor, kids[0]) || !DRAWN.has(adaptor.kind(kids[0]))) return null;
  if (STRUCTURAL.has(adaptor.getAttribute(group, "data-mml-node"))) return null;
  if (STRUCTURAL.has(adaptor.getAttribute(parent, "data-mml-node"))) return null;
  if (adaptor.kind(parent) === "svg" && adaptor.getAttribute(parent, "data-table") != null) return null;
  const only = kids[0];
  for (const { name, value } of adaptor.allAttributes(group)) {
    if (name === "transform" || BOOKKEEPING.has(name)) continue;
    const theirs = adaptor.getAttribute(only, name);
    if (theirs != null && theirs !== "" && theirs !== value) return null;
  }
  return only;
}

// Post-order, so a chain <g><g><use/></g></g> folds to one <use>. Returns the count of groups folded.
function foldGroups(adaptor, node) {
  let folded = 0;
  for (const child of adaptor.childNodes(node).slice()) {
    if (!isElement(adaptor, child)) continue;
    folded += foldGroups(adaptor, child);
    const only = foldableChild(adaptor, child, node);
    if (only === null) continue;
    for (const { name, value } of adaptor.allAttributes(child)) {
      if (name === "transform") {
        const own = adaptor.getAttribute(only, "transform");
        adaptor.setAttribute(only, "transform", own ? `${value} ${own}` : value);
      } else if (!BOOKKEEPING.has(name) && adaptor.getAttribute(only, name) == null) {
        adaptor.setAttribute(only, name, value);
      }
    }
    adaptor.replace(only, child);
    folded += 1;
  }
  return folded;
}

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
          const node = MathJax.tex2svg(formula.tex, { display: !!formula.display });
          if (request.fold !== false) {
            for (const svg of adaptor.tags(node, "svg")) {
              foldGroups(adaptor, svg);
            }
          }
          return adaptor.outerHTML(node);
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
