/* The book site's own script (added by bookbuild.site to every page).
 *
 * Sidebar buttons. The page has two buttons of class `primary-toggle` (one in
 * pydata-sphinx-theme's top bar, one in sphinx-book-theme's article header) and
 * two of class `secondary-toggle`; both themes attach their handlers to the
 * first one only, which is hidden, so the visible buttons did nothing. Each
 * visible button here passes its click on to the first one, where the themes'
 * handlers collapse the sidebar (wide screens) or open it as a dialog (narrow).
 *
 * Wide formulas and code. A display formula or code block that scrolls sideways
 * in its box gets a tab stop (keyboard scrolling; axe's scrollable-region-focusable),
 * also when it comes into view later (a folded cell opened).
 *
 * Wide tables and figures. A table wider than the column, or a figure held at the width
 * that keeps its text readable on a phone (book-site.css), scrolls sideways in its box;
 * the box says on which sides more lies beyond (`data-book-more="left right"`), and
 * book-site.css fades that edge: the cue that code and formulas draw with a shadow
 * under their text, drawn over a table's shaded rows and over a picture. A table's box
 * that scrolls gets a tab stop, also when a fold that holds it is opened.
 *
 * Solution headers. sphinx-exercise puts a link to the exercise inside the
 * title of a folded solution; a click on it left the page instead of opening
 * the solution. The link now opens the solution, like the rest of the title.
 *
 * MathJax after the first paint, where the math was not typeset at build time
 * (bookbuild/site/mathrender.py, which needs Node). bookbuild/site/speed.py turns MathJax's script
 * tag into `<script data-book-mathjax="SRC">`; here the script is added once the
 * page has loaded and painted, so a phone shows the text without waiting for
 * MathJax. Its lazy-typesetting extension (ui/lazy, _config.yml) typesets the
 * math on screen first (at once, marked `book-math-now`); the rest is typeset here in small batches when the
 * browser is idle, so that every formula is rendered soon (for screen readers,
 * find in page and print) without one long task. When no formula is left, the
 * page's root element gets `data-book-math="typeset"`.
 */
(function () {
  "use strict";

  function forwardToggles(selector) {
    const buttons = Array.from(document.querySelectorAll(selector));
    const handled = buttons[0];
    buttons.slice(1).forEach((button) => {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        handled.click();
      });
    });
  }

  function solutionTitlesOpenTheSolution() {
    document.querySelectorAll(".admonition.dropdown > .admonition-title a").forEach((link) => {
      link.addEventListener("click", (event) => {
        // Stay on the page and press the title's fold button (sphinx-togglebutton adds it once the page loads).
        event.preventDefault();
        event.stopPropagation();
        const button = link.closest(".admonition-title").querySelector(".toggle-button");
        if (button) {
          button.click();
        }
      });
    });
  }

  const MATH_BATCH = 4; // formulas per idle-time batch: a batch stays a short task on a slow phone
  const idle = window.requestIdleCallback || ((callback) => setTimeout(callback, 50));

  function typesetTheRest() {
    const doc = window.MathJax.startup.document;
    let stalled = 0;
    let left = Infinity;
    function step() {
      if (!doc.lazyIdle) { // the extension's previous batch is done
        const markers = Array.from(document.querySelectorAll("mjx-lazy"));
        if (markers.length === 0) {
          document.documentElement.dataset.bookMath = "typeset";
          return;
        }
        stalled = markers.length < left ? 0 : stalled + 1;
        left = markers.length;
        if (stalled > 50) {
          console.warn("book-site.js: " + left + " formulas left untypeset");
          return;
        }
        doc.lazyObserve(markers.slice(0, MATH_BATCH).map((target) => ({ isIntersecting: true, target: target })));
      }
      idle(step);
    }
    idle(step);
  }

  function loadMathJax() {
    const marker = document.querySelector("script[data-book-mathjax]");
    if (!marker) { // no MathJax to load: the math was typeset when the book was built (mathrender.py), if any
      return;
    }
    // The formulas on (or near) the screen are typeset at once: lazily, each would first shrink to an empty
    // placeholder and grow back a moment later, shifting the text being read.
    // (MathJax 3.2.2's extension fails when the option names no element, so it is set only when one is near.)
    const margin = 200;
    let near = 0;
    document.querySelectorAll(".math").forEach((math) => {
      const box = math.getBoundingClientRect();
      if (box.bottom > -margin && box.top < window.innerHeight + margin) {
        math.classList.add("book-math-now");
        near += 1;
      }
    });
    const config = window.MathJax || (window.MathJax = {});
    if (near > 0) {
      config.options = Object.assign({}, config.options, { lazyAlwaysTypeset: ".book-math-now" });
    }
    const script = document.createElement("script");
    script.src = marker.dataset.bookMathjax;
    script.addEventListener("load", () => {
      window.MathJax.startup.promise.then(() => {
        if (window.MathJax.startup.document.lazyObserve) {
          typesetTheRest();
        } else {
          document.documentElement.dataset.bookMath = "typeset";
        }
      });
    });
    document.head.appendChild(script);
  }

  // A display formula wider than a phone's column scrolls sideways in its box (book-site.css); a box that
  // scrolls gets a tab stop so that keyboard users can scroll it too. (MathJax in the browser made every formula
  // focusable; formulas typeset at build time are not.) Code blocks too: the theme gives a scrolling <pre> its
  // tab stop when the page loads or the window is resized, but not when a folded cell is opened (its code had
  // no width when the theme looked), so such a block could not be scrolled from the keyboard.
  // A ResizeObserver reads the widths after the browser's own layout, on load and whenever a box changes
  // size (a fold opened, the window turned), so this forces no extra layout of a long page.
  // A code block off the screen is not laid out (content-visibility, book-site.css) and reports no overflow
  // until it is drawn. Until then its longest line (data-book-cols, written by the build) times the width of
  // one character of its font tells whether it will scroll, and so whether it takes a tab stop now; the theme,
  // which measures the undrawn block and finds nothing to scroll, is not allowed to take that stop away. Once
  // drawn (contentvisibilityautostatechange) the block is measured; it keeps its size, so the ResizeObserver
  // would not see it. A reader who presses Tab gets every block drawn, and measured, before the focus moves.
  function scrollingBoxesFocusable() {
    const boxes = document.querySelectorAll("div.math > mjx-container, main pre");
    if (boxes.length === 0 || !window.ResizeObserver) {
      return;
    }
    const drawn = new WeakSet();
    const willScroll = new WeakMap(); // block -> whether it scrolls (measured, or estimated while undrawn)
    const lazy = (box) => box.tagName === "PRE" && box.dataset.bookCols !== undefined && !drawn.has(box);
    const charWidths = new Map();
    function charWidth(style) {
      const font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      if (!charWidths.has(font)) {
        const context = document.createElement("canvas").getContext("2d");
        context.font = font;
        charWidths.set(font, context.measureText("0").width);
      }
      return charWidths.get(font);
    }
    function measure(targets) {
      // Every width is read before any tab stop is set: a write between two reads would make the browser
      // lay the whole page out again for the second read.
      const scrolls = targets.map((box) => {
        if (!lazy(box)) {
          const wide = box.scrollWidth > box.clientWidth + 1;
          if (box.tagName === "PRE") {
            willScroll.set(box, wide); // what it measured drawn holds once it is off the screen again
          }
          return wide;
        }
        const style = getComputedStyle(box);
        const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        const wide = box.clientWidth > 0 && Number(box.dataset.bookCols) * charWidth(style) > room + 1;
        willScroll.set(box, wide);
        return wide;
      });
      targets.forEach((box, i) => {
        if (scrolls[i]) {
          box.tabIndex = 0;
        } else if (box.tagName === "PRE") {
          if (box.clientWidth > 0 && (lazy(box) || box.scrollHeight <= box.clientHeight + 1)) {
            box.tabIndex = -1; // as the theme does for a block that does not scroll
          }
        } else if (box.hasAttribute("tabindex") && !box.querySelector("mjx-math")) { // not MathJax's own
          box.removeAttribute("tabindex");
        }
      });
    }
    const observer = new ResizeObserver((entries) => measure(entries.map((entry) => entry.target)));
    boxes.forEach((box) => {
      observer.observe(box);
      if (box.tagName === "PRE") {
        box.addEventListener("contentvisibilityautostatechange", (event) => {
          if (event.skipped) {
            drawn.delete(box);
          } else {
            drawn.add(box);
            requestAnimationFrame(() => measure([box]));
          }
        });
      }
    });
    new MutationObserver((records) => {
      records.forEach(({ target: box }) => {
        if (box.tabIndex !== 0 && lazy(box) && willScroll.get(box)) {
          box.tabIndex = 0;
        }
      });
    }).observe(document.querySelector("main") || document.body,
               { subtree: true, attributes: true, attributeFilter: ["tabindex"] });
    document.addEventListener("keydown", function drawEveryBlock(event) {
      if (event.key !== "Tab") {
        return;
      }
      document.removeEventListener("keydown", drawEveryBlock, true);
      document.documentElement.dataset.bookKeyboard = "";
      boxes.forEach((box) => drawn.add(box));
      measure(Array.from(boxes));
    }, true);
  }

  // Which sides of a scrolling table or figure hide more (see the header). A ResizeObserver measures each box
  // after the browser's own layout (on load, a fold opened, the window turned), a scroll re-reads that one box.
  function scrollCues() {
    const boxes = document.querySelectorAll("main .pst-scrollable-table-container, main figure a.image-reference");
    if (boxes.length === 0 || !window.ResizeObserver) {
      return;
    }
    // Every box is read before any is written: a write between two reads would make the browser lay the whole
    // page out again for the second read (on a chapter with many figures, a long task on load).
    function mark(list) {
      const read = list.map((box) => ({ room: box.scrollWidth - box.clientWidth, width: box.clientWidth,
                                        left: box.scrollLeft }));
      list.forEach((box, i) => {
        const { room, width, left } = read[i];
        const sides = [];
        if (room > 1 && width > 0) {
          if (left > 1) {
            sides.push("left");
          }
          if (left < room - 1) {
            sides.push("right");
          }
          if (box.tagName === "DIV" && box.tabIndex !== 0) {
            box.tabIndex = 0;
          }
        }
        const more = sides.join(" ");
        if ((box.dataset.bookMore || "") !== more) {
          box.dataset.bookMore = more;
        }
      });
    }
    const observer = new ResizeObserver((entries) => mark(entries.map((entry) => entry.target)));
    boxes.forEach((box) => {
      observer.observe(box);
      box.addEventListener("scroll", () => mark([box]), { passive: true });
    });
  }

  function afterFirstPaint(callback) {
    const go = () => requestAnimationFrame(() => setTimeout(callback, 0));
    if (document.readyState === "complete") {
      go();
    } else {
      window.addEventListener("load", go);
    }
  }

  // Whether an element has left the window (a preview of it then has nothing to stand beside).
  function offScreen(el) {
    var r = el.getBoundingClientRect();
    return r.bottom < 0 || r.top > window.innerHeight;
  }

  // A claim's preview (bookbuild/lint/claims.py) opens on hover and focus; Escape closes it (WCAG 1.4.13).
  // One Tab stop per claim: the link inside the preview is out of the Tab order, and Enter on the mark
  // moves the focus onto it (the preview stays open while it holds the focus); Escape there gives the focus
  // back to the mark, closed, and Tab goes on to what follows the claim.
  function claimPreviewsDismissible() {
    document.addEventListener("keydown", function (event) {
      var active = document.activeElement;
      if (!active || !active.classList) return;
      if (active.classList.contains("claim-mark")) {
        if (event.key === "Escape") {
          active.setAttribute("data-closed", "");  // keeps the focus where it is
        } else if (event.key === "Enter" || event.key === " ") {
          var link = active.nextElementSibling && active.nextElementSibling.querySelector("a");
          if (link) {
            event.preventDefault();
            active.removeAttribute("data-closed");
            active.setAttribute("data-open", "");  // held open while its link has the focus
            link.focus();
          }
        }
      } else if (event.key === "Escape" && active.classList.contains("claim-tip-link")) {
        var mark = active.closest(".claim-anchor").querySelector(".claim-mark");
        mark.setAttribute("data-closed", "");
        mark.focus();  // the link's focusout above lets go of data-open
      }
    });
    // Keep an open preview inside the window: shift it left by what would overflow the right edge.
    function place(event) {
      var mark = event.target;
      if (!mark.classList || !mark.classList.contains("claim-mark")) return;
      var tip = mark.nextElementSibling;
      if (!tip || window.innerWidth <= 600) return;  // on a phone the stylesheet docks it at the bottom
      tip.style.left = "";
      var overflow = tip.getBoundingClientRect().right - (document.documentElement.clientWidth - 8);
      if (overflow > 0) tip.style.left = "calc(-1rem - " + Math.ceil(overflow) + "px)";
    }
    document.addEventListener("focusin", place);
    document.addEventListener("mouseover", place);
    // A preview docked at the bottom of a phone's screen closes when its claim scrolls out of view.
    window.addEventListener("scroll", function () {
      var active = document.activeElement;
      if (active && active.classList && active.classList.contains("claim-mark") && offScreen(active)) {
        active.setAttribute("data-closed", "");
      }
    }, { passive: true });
    document.addEventListener("focusout", function (event) {
      var target = event.target;
      if (target.classList && target.classList.contains("claim-mark")) {
        target.removeAttribute("data-closed");
      } else if (target.classList && target.classList.contains("claim-tip-link")) {
        target.closest(".claim-anchor").querySelector(".claim-mark").removeAttribute("data-open");
      }
    });
  }

  // Where a glued number came from (bookbuild/site/provenance.py), in the reader's words: one shared preview,
  // filled from the page's JSON, opens on hover and focus of the number and says whether the build computed
  // it or read it from a training made ahead of the build, links the code that computed it and the build
  // report; Enter pins it (its links then take the focus), Escape closes it and gives the focus back. A
  // glued phrase (no digit) is ordinary text: no preview, no Tab stop.
  function gluePreviews() {
    var source = document.getElementById("glue-provenance");
    if (!source) return;
    var data;
    try { data = JSON.parse(source.textContent); } catch (e) { return; }
    var tip = document.createElement("div");
    tip.id = "glue-tip";
    tip.className = "glue-tip";
    tip.setAttribute("role", "tooltip");
    tip.hidden = true;
    document.body.appendChild(tip);
    var owner = null, pinned = false, returning = false;

    function text(tag, cls, value) {
      var el = document.createElement(tag);
      if (cls) el.className = cls;
      el.textContent = value;
      return el;
    }
    function seeds(runs) {  // "seed 2", "seeds 0 to 2", "seeds 0, 3 and 7", or "" when no run has one
      var s = runs.filter(function (r) { return typeof r.seed === "number"; }).map(function (r) { return r.seed; })
        .filter(function (v, i, all) { return all.indexOf(v) === i; }).sort(function (a, b) { return a - b; });
      if (!s.length) return "";
      if (s.length === 1) return "seed " + s[0];
      if (s[s.length - 1] - s[0] === s.length - 1) return "seeds " + s[0] + " to " + s[s.length - 1];
      return "seeds " + s.slice(0, -1).join(", ") + " and " + s[s.length - 1];
    }
    function fill(key) {
      var d = data[key];
      var runs = d.runs || [], ahead = (d.sweeps || []).length > 0;
      var trainings = runs.map(function (r) { return r.function.split(".").pop(); })
        .filter(function (name, i, all) { return all.indexOf(name) === i; });
      var which = trainings.length ? (trainings.length === 1 ? "the training " : "the trainings ") +
        trainings.join(", ") + (seeds(runs) ? " (" + seeds(runs) + ")" : "") : "";
      tip.textContent = "";
      var head;
      if (ahead) {
        head = "Read from " + (which ? which + "," : "trainings") + " made ahead of the book's build, which " +
          "checks that they match the code shown here";
      } else if (runs.length) {
        var fresh = runs.some(function (r) { return r.outcome === "computed"; });
        head = "Computed when the book was built, from " + which +
          (fresh ? ", trained by this build" : ", trained by an earlier build of the same code");
      } else {
        head = "Computed when the book was built, by the code on this page";
      }
      tip.appendChild(text("span", "glue-tip-head", head));
      (d.listings || []).forEach(function (l) {
        var a = text("a", "glue-tip-link", "Code: " + l.name);
        a.href = "#" + l.id;
        tip.appendChild(a);
      });
      if (owner && document.activeElement === owner && owner.getAttribute("data-numbers") !== "1") {
        tip.appendChild(text("span", "glue-tip-note", "\u2190 \u2192: the other numbers of this paragraph"));
      }
      var more = text("a", "glue-tip-link", "How it was made, in detail: the build report");
      // the report's row of this number's run (its key, time and outcome), else what the page read
      more.href = "build-report.html#" + (runs.length && runs[0].anchor ? runs[0].anchor :
        ahead ? "what-each-chapter-read" : "where-each-chapter-ran");
      tip.appendChild(more);
    }
    function place(el) {
      if (window.innerWidth <= 600) { tip.style.left = ""; tip.style.top = ""; return; }  // docked by CSS
      var r = el.getBoundingClientRect();
      var width = Math.min(tip.offsetWidth, document.documentElement.clientWidth - 16);
      var left = Math.max(8, Math.min(r.left, document.documentElement.clientWidth - width - 8));
      var below = r.bottom + 6;
      var top = below + tip.offsetHeight > window.innerHeight - 8 ? r.top - tip.offsetHeight - 6 : below;
      tip.style.left = left + "px";
      tip.style.top = Math.max(8, top) + "px";
    }
    function show(el) {
      var key = el.getAttribute("data-glue");
      if (!data[key]) return;
      owner = el;
      fill(key);
      tip.hidden = false;
      place(el);
    }
    function hide(giveBack) {
      tip.hidden = true;
      pinned = false;
      if (giveBack && owner) {
        returning = true;  // the focus comes back closed, as Escape on a claim's mark leaves it
        owner.focus();
        returning = false;
      }
    }
    var groups = new Map();  // a paragraph (or list item, table cell, caption) -> its numbers, in order
    document.querySelectorAll("span.glued").forEach(function (el) {
      var key = null;
      el.classList.forEach(function (c) { if (c.indexOf("glue-key-") === 0) key = c.slice(9); });
      if (!key || !data[key]) return;
      if (!/[0-9]/.test(el.textContent)) { el.classList.add("glued-words"); return; }  // a phrase, not a number
      el.setAttribute("data-glue", key);
      // One Tab stop per paragraph: its first number; the arrow keys move between its numbers (roving focus)
      var block = el.closest("p, li, td, th, figcaption, dd, .admonition-title") || el.parentElement;
      var group = groups.get(block);
      if (!group) { group = []; groups.set(block, group); }
      el.setAttribute("tabindex", group.length ? "-1" : "0");
      group.push(el);
      el.setAttribute("aria-describedby", "glue-tip");
      el.addEventListener("keydown", function (event) {
        var step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
        var next = step && group[group.indexOf(el) + step];
        if (!next) return;
        event.preventDefault();
        el.setAttribute("tabindex", "-1");
        next.setAttribute("tabindex", "0");  // Tab back into the paragraph returns to the number last read
        next.focus();
      });
      el.addEventListener("mouseenter", function () { if (!pinned) show(el); });
      el.addEventListener("mouseleave", function () {
        setTimeout(function () {
          if (!pinned && owner === el && !tip.matches(":hover") && document.activeElement !== el) hide();
        }, 150);
      });
      el.addEventListener("focus", function () { if (!pinned && !returning) show(el); });
      el.addEventListener("blur", function (event) {
        // closed at once when the focus moves on (the next stop's preview never meets this one), kept when
        // it moves into the preview (Enter pins it and focuses its first link)
        if (pinned || owner !== el || (event.relatedTarget && tip.contains(event.relatedTarget))) return;
        hide();
      });
      el.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          show(el);
          pinned = true;
          var first = tip.querySelector("a");
          tip.setAttribute("tabindex", "-1");
          (first || tip).focus();
        }
      });
      el.addEventListener("click", function () { show(el); pinned = true; });
    });
    groups.forEach(function (group) {
      group.forEach(function (el) { el.setAttribute("data-numbers", String(group.length)); });
    });
    tip.addEventListener("mouseleave", function () { if (!pinned && document.activeElement !== owner) hide(); });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && !tip.hidden) hide(tip.contains(document.activeElement) || pinned);
    });
    document.addEventListener("click", function (event) {
      if (!tip.hidden && pinned && !tip.contains(event.target) && event.target !== owner) hide();
    });
    document.addEventListener("focusin", function (event) {
      if (!tip.hidden && pinned && !tip.contains(event.target) && event.target !== owner) hide();
    });
    window.addEventListener("scroll", function () {
      if (tip.hidden || !owner) return;
      if (offScreen(owner)) { hide(); return; }  // its sentence has scrolled away: the preview goes with it
      place(owner);
    }, { passive: true });
  }

  // Where a link goes (bookbuild/site/previews.py): the page's <template id="book-previews"> holds a short
  // preview of each target its text links to (a citation's entry, a term's definition, a section's opening,
  // a figure, table, equation, exercise or listing), keyed by the link's href. One shared preview opens on
  // hover (after a short pause, so a pointer passing over the text opens nothing) and on keyboard focus; it
  // stays while the pointer is over it, and Escape closes it with the focus left on the link (WCAG 1.4.13).
  // On a touch screen, where there is no hover, the first tap on a link shows its preview docked at the foot
  // of the screen, with a link to go there; a second tap on the same link follows it.
  function linkPreviews() {
    var source = document.getElementById("book-previews");
    if (!source || !source.content) return;
    var previews = {};
    source.content.querySelectorAll("[data-href]").forEach(function (el) {
      previews[el.getAttribute("data-href")] = el;
    });
    var GO = { citation: "the bibliography entry", term: "the glossary entry", section: "the section",
      page: "the page", figure: "the figure", table: "the table", equation: "the equation",
      exercise: "the exercise", listing: "the listing" };
    var tip = document.createElement("div");
    tip.id = "link-tip";
    tip.className = "link-tip";
    tip.setAttribute("role", "tooltip");
    tip.hidden = true;
    document.body.appendChild(tip);
    var owner = null, closedOn = null, touch = false, opening = null, closing = null;

    function fill(link) {
      var preview = previews[link.getAttribute("href")];
      tip.textContent = "";
      tip.appendChild(preview.cloneNode(true));
      tip.setAttribute("data-kind", preview.getAttribute("data-kind"));
      if (touch) {
        var go = document.createElement("a");
        go.className = "link-tip-go";
        go.href = link.href;
        go.textContent = "Go to " + (GO[preview.getAttribute("data-kind")] || "the link") + " \u2192";
        tip.appendChild(go);
      }
      // Where the math is typeset in the browser (no Node at build time), the preview's math is typeset now.
      if (window.MathJax && window.MathJax.typesetPromise && tip.querySelector(".math")) {
        window.MathJax.typesetPromise([tip]).catch(function () {});
      }
    }
    function place(link) {
      if (window.innerWidth <= 600) { tip.style.left = ""; tip.style.top = ""; return; } // docked by CSS
      var r = link.getBoundingClientRect();
      var width = Math.min(tip.offsetWidth, document.documentElement.clientWidth - 16);
      var left = Math.max(8, Math.min(r.left, document.documentElement.clientWidth - width - 8));
      var below = r.bottom + 6;
      var top = below + tip.offsetHeight > window.innerHeight - 8 ? r.top - tip.offsetHeight - 6 : below;
      tip.style.left = left + "px";
      tip.style.top = Math.max(8, top) + "px";
    }
    function show(link) {
      clearTimeout(opening);
      clearTimeout(closing);
      if (owner && owner !== link) owner.removeAttribute("aria-describedby");
      owner = link;
      fill(link);
      tip.hidden = false;
      link.setAttribute("aria-describedby", "link-tip");
      place(link);
    }
    function hide() {
      clearTimeout(opening);
      clearTimeout(closing);
      tip.hidden = true;
      if (owner) owner.removeAttribute("aria-describedby");
      owner = null;
    }
    function hideSoon(link) {
      clearTimeout(closing);
      closing = setTimeout(function () { // time for the pointer to cross from the link onto the preview
        if (owner === link && !tip.matches(":hover") && document.activeElement !== link) hide();
      }, 400);
    }
    document.querySelectorAll("article.bd-article a.reference.internal[href]").forEach(function (link) {
      if (!previews[link.getAttribute("href")] || link.classList.contains("image-reference")) return;
      link.removeAttribute("title"); // the browser's own tooltip would repeat the preview
      link.addEventListener("mouseenter", function () {
        if (touch) return;
        clearTimeout(closing);
        clearTimeout(opening);
        if (owner !== link) opening = setTimeout(function () { show(link); }, 300);
      });
      link.addEventListener("mouseleave", function () { clearTimeout(opening); hideSoon(link); });
      link.addEventListener("focus", function () { if (closedOn !== link && !touch) show(link); });
      link.addEventListener("blur", function (event) {
        closedOn = null;
        // The focus moved on by the keyboard: close at once, so the next stop's preview never meets this one;
        // the pointer gets time to cross onto the preview (and a tap onto its "Go to" link).
        if (touch || tip.contains(event.relatedTarget) || tip.matches(":hover")) hideSoon(link);
        else if (owner === link) hide();
      });
      link.addEventListener("click", function (event) {
        if (touch && owner !== link) { // the first tap previews; the next one follows the link
          event.preventDefault();
          show(link);
        }
      });
    });
    tip.addEventListener("mouseenter", function () { clearTimeout(closing); });
    tip.addEventListener("mouseleave", function () { if (owner) hideSoon(owner); });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && !tip.hidden) {
        closedOn = owner;
        hide();
      }
    });
    document.addEventListener("pointerdown", function (event) {
      touch = event.pointerType === "touch" || event.pointerType === "pen";
      if (!tip.hidden && !tip.contains(event.target) && event.target.closest("a") !== owner) hide();
    }, true);
    window.addEventListener("scroll", function () { if (!tip.hidden && owner && !touch) place(owner); }, { passive: true });
  }

  function ready() {
    gluePreviews();
    linkPreviews();
    claimPreviewsDismissible();
    forwardToggles(".primary-toggle");
    forwardToggles(".secondary-toggle");
    solutionTitlesOpenTheSolution();
    scrollingBoxesFocusable();
    scrollCues();
    afterFirstPaint(loadMathJax);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
