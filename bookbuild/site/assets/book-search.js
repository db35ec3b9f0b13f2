/* The search page's summaries (added by bookbuild/site/search.py to the search page only).
 *
 * Sphinx's search lists the pages and sections that hold the query's words. Under each
 * result this script puts the text around the first place in the page (or in the section
 * the result names) where the most of those words fall together, about 240 characters,
 * with the query's words marked, as Sphinx's own summary does. Sphinx makes its summary
 * by fetching the page, which a browser refuses for a site opened from disk; here each
 * page's text comes from a small script written by the build,
 * `_static/book-search/<page>.js`, loaded by a script tag for the pages in the results
 * only. The words are looked for as typed and as Sphinx's
 * stemmer reduces them ("gates" and "gate"), since the index matched either.
 */
(function () {
  "use strict";

  const BEFORE = 120; // characters of context before the first match
  const LENGTH = 240; // characters in a summary
  const MAX_PLACES = 200; // occurrences of each word considered
  const texts = {};
  const waiting = {};

  window.bookSearchText = function (page, data) {
    texts[page] = data;
    (waiting[page] || []).forEach((callback) => callback(data));
    delete waiting[page];
  };

  function withText(page, callback) {
    if (texts[page]) {
      callback(texts[page]);
      return;
    }
    if (waiting[page]) {
      waiting[page].push(callback);
      return;
    }
    waiting[page] = [callback];
    const script = document.createElement("script");
    script.src = (document.documentElement.dataset.content_root || "") + "_static/book-search/" + page + ".js";
    script.onerror = () => delete waiting[page];
    document.head.appendChild(script);
  }

  /** The query's words, each as its forms: as typed and as Sphinx's stemmer has it. */
  function queryWords() {
    const query = new URLSearchParams(window.location.search).get("q") || "";
    const stemmer = typeof Stemmer === "function" ? new Stemmer() : null;
    const words = [];
    query.toLowerCase().split(/\s+/).forEach((word) => {
      word = word.replace(/^[-+]+|["'.,;:!?()]+/g, "");
      if (word.length < 2) {
        return;
      }
      const stem = stemmer ? stemmer.stemWord(word) : word;
      words.push(stem.length > 1 && stem !== word ? [word, stem] : [word]);
    });
    return words;
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+\-?^${}()|[\]\\]/g, "\\$&");
  }

  /** Where the summary centres: the first place from `start` where the most of the query's words fall
   * within one summary (up to MAX_PLACES tried per word), or -1 where none is found. */
  function bestMatch(lower, start, words) {
    const places = [];
    for (const word of words.flat()) {
      for (let at = lower.indexOf(word, start), n = 0; at > -1 && n < MAX_PLACES; n++) {
        places.push(at);
        at = lower.indexOf(word, at + word.length);
      }
    }
    places.sort((a, b) => a - b);
    let best = -1;
    let bestCount = 0;
    for (const at of places) {
      const window = lower.slice(Math.max(start, at - BEFORE), at + LENGTH - BEFORE);
      const count = words.filter((forms) => forms.some((form) => window.includes(form))).length;
      if (count > bestCount) {
        best = at;
        bestCount = count;
      }
    }
    return best;
  }

  /** The summary's text: from a word boundary before the first match to one about LENGTH characters on. */
  function summaryText(data, anchor, words) {
    const text = data.text;
    const lower = text.toLowerCase();
    const start = anchor && anchor in data.sections ? data.sections[anchor] : 0;
    const first = bestMatch(lower, start, words);
    let from = Math.max(start, (first < 0 ? start : first) - BEFORE);
    if (from > start) {
      const space = text.indexOf(" ", from);
      from = space > -1 && space < (first < 0 ? from + BEFORE : first) ? space + 1 : from;
    }
    let to = Math.min(text.length, from + LENGTH);
    if (to < text.length) {
      const space = text.lastIndexOf(" ", to);
      to = space > from ? space : to;
    }
    return (from > 0 ? "… " : "") + text.slice(from, to).trim() + (to < text.length ? " …" : "");
  }

  function summary(text, words) {
    const p = document.createElement("p");
    p.className = "context book-search-summary";
    if (!words.length) {
      p.textContent = text;
      return p;
    }
    const forms = words.flat().sort((a, b) => b.length - a.length); // the longest form first: "gates", not "gate"
    const pattern = new RegExp("(" + forms.map(escapeRegExp).join("|") + ")", "gi");
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      p.appendChild(document.createTextNode(text.slice(last, match.index)));
      const mark = p.appendChild(document.createElement("span"));
      mark.className = "highlighted";
      mark.textContent = match[0];
      last = match.index + match[0].length;
    }
    p.appendChild(document.createTextNode(text.slice(last)));
    return p;
  }

  function addSummary(item, words) {
    const link = item.querySelector("a");
    if (!link || item.querySelector("p.context") || item.dataset.bookSummary) {
      return;
    }
    item.dataset.bookSummary = "loading";
    const [path, anchor] = (link.getAttribute("href") || "").split("#");
    const page = path.replace(/\.html$/, "");
    withText(page, (data) => {
      item.appendChild(summary(summaryText(data, anchor ? decodeURIComponent(anchor) : "", words), words));
      item.dataset.bookSummary = "shown";
    });
  }

  function start() {
    const results = document.getElementById("search-results");
    if (!results) {
      return;
    }
    const words = queryWords();
    const each = () => results.querySelectorAll("ul.search > li").forEach((item) => addSummary(item, words));
    new MutationObserver(each).observe(results, { childList: true, subtree: true });
    each();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
