/* The book's panel player: one small script shared by every interactive panel.
 *
 * A panel is an element `.book-panel` holding its data as JSON
 * (`script.book-panel-data`, written at build time by chapter_code/panels/data.py),
 * its transcript (one list item per beat, math typeset at build time like the
 * rest of the book) and a static figure for readers without JavaScript (in
 * <noscript>). The player puts an SVG stage in its place, draws the first beat
 * on load (paused: a beat advances when the reader steps it), and adds the
 * controls: Back and Next, Play/Pause, a scrubber over the beats, a speed menu,
 * and the panel's own parameter sliders. Keyboard, when the stage has focus:
 * Space or K plays/pauses, arrows step between beats, Home/End jump to the
 * first/last beat, Escape pauses. Playing holds each beat for a time in
 * proportion to the words of its narration (`msPerWord` per word, after a move
 * of `moveMs`), divided by the speed. Moving a parameter slider pauses and
 * redraws the current beat with the reader's value; playing or stepping
 * returns to the timeline's values. With prefers-reduced-motion, each beat is
 * drawn finished: nothing moves between beats.
 *
 * The narration under the drawing is the beat's transcript item, copied (so
 * its math is the book's typeset math, read by screen readers as MathML). The
 * drawing has two layouts: a wide one in a 640-unit viewBox (scaled to the
 * column, never below NARROW_BELOW / 640 of its size), and below NARROW_BELOW
 * CSS px a narrow one whose viewBox is the stage's own width, so that a unit
 * is a CSS pixel and the drawing's smallest text (Canvas.min) is that many px.
 *
 * Drawing is delegated to the panel's renderer, registered by name with
 * BookPanels.register(name, {height(narrow, w), draw(canvas, state, data),
 * describe(state, data), compute?}); see panels.js. Plain JavaScript and SVG;
 * no framework, nothing fetched from anywhere.
 */
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const SPEEDS = [0.5, 1, 1.5, 2];
  const NARROW_BELOW = 600; // CSS px of stage width below which the narrow layout is drawn
  const WIDE_W = 640; // the wide layout's viewBox width
  const INK = "#1a1a1a";
  const renderers = {};

  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null) {
        e.setAttribute(k, String(v));
      }
    }
    if (text !== undefined) {
      e.textContent = text;
    }
    return e;
  }

  function htmlEl(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      e.setAttribute(k, String(v));
    }
    if (text !== undefined) {
      e.textContent = text;
    }
    return e;
  }

  /** Numbers between two beats: every number moves linearly, anything else switches at the end. */
  function between(a, b, t) {
    const out = {};
    for (const key of Object.keys(b)) {
      const x = a[key];
      const y = b[key];
      out[key] = typeof x === "number" && typeof y === "number" ? x + (y - x) * t : t < 1 ? x : y;
    }
    return out;
  }

  /** A number as the panels print it (the same rule as chapter_code.panels.data.number). */
  function number(value, digits) {
    const d = digits === undefined ? 2 : digits;
    if (value === 0) {
      return "0";
    }
    if (Math.abs(value) >= 1e-3 && Math.abs(value) < 1e4) {
      return String(Number(value.toPrecision(d + 1)));
    }
    const [mantissa, exponent] = value.toExponential(d - 1).split("e");
    const sup = { "-": "\u207b", 0: "\u2070", 1: "\u00b9", 2: "\u00b2", 3: "\u00b3", 4: "\u2074", 5: "\u2075",
      6: "\u2076", 7: "\u2077", 8: "\u2078", 9: "\u2079" };
    const exp = String(parseInt(exponent, 10)).split("").map((c) => sup[c]).join("");
    return `${mantissa} \u00d7 10${exp}`;
  }

  const UNSUP = { "\u207b": "-", "\u2070": "0", "\u00b9": "1", "\u00b2": "2", "\u00b3": "3", "\u2074": "4",
    "\u2075": "5", "\u2076": "6", "\u2077": "7", "\u2078": "8", "\u2079": "9" };

  /**
   * A number for the drawings: as `number`, with a true minus sign (U+2212) and a power of ten written as TeX
   * (3.1 × $10^{-73}$), so that its exponent is set as a superscript no smaller than the drawing's least text.
   */
  function signed(value, digits) {
    return number(value, digits).replace(/^-/, "\u2212").replace(/ \u00d7 /, "\u00a0\u00d7\u00a0") // one word
      .replace(/10([\u207b\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)$/,
        (_, e) => `$10^{${e.split("").map((c) => UNSUP[c]).join("")}}$`);
  }

  // ------------------------------------------------------------------ math in the drawings

  const SYMBOLS = { sigma: "\u03c3", tau: "\u03c4", partial: "\u2202", times: "\u00d7", cdot: "\u00b7",
    approx: "\u2248", ",": "\u2009", " ": " " };
  const UPRIGHT = new Set(["times", "cdot", "approx", ",", " "]);
  const FUNCTIONS = new Set(["tanh", "exp", "log", "softmax"]);

  /** `s` from position `i`: a braced group or one character; returns [content, next position]. */
  function group(s, i) {
    if (s[i] !== "{") {
      return [s[i] || "", i + 1];
    }
    let depth = 0;
    for (let j = i; j < s.length; j += 1) {
      depth += s[j] === "{" ? 1 : s[j] === "}" ? -1 : 0;
      if (depth === 0) {
        return [s.slice(i + 1, j), j + 1];
      }
    }
    return [s.slice(i + 1), s.length];
  }

  const RELATIONS = { "=": " = ", "<": " < ", ">": " > " };

  /**
   * Runs of a TeX formula (the small subset the drawings use): {text, italic, level} (-1 sub, 1 sup). As in
   * TeX, spaces typed in a formula are ignored; relations and binary operators get spaces around them, except
   * in a sub- or superscript (a minus after an operand is binary, anywhere else a sign).
   */
  function mathRuns(s, level, out) {
    let i = 0;
    let operand = false; // whether the last thing set can be the left side of a binary operator
    while (i < s.length) {
      const c = s[i];
      if (c === " ") {
        i += 1;
        continue;
      }
      if (c in RELATIONS || ((c === "+" || c === "-") && operand)) {
        const sign = RELATIONS[c] || (c === "+" ? " + " : " \u2212 ");
        out.push({ text: level ? sign.trim() : sign, italic: false, level }); // scripts are set without the spaces
        operand = false;
        i += 1;
        continue;
      }
      operand = !"(,".includes(c);
      if (c === "\\") {
        const m = /^\\([A-Za-z]+|.)/.exec(s.slice(i));
        const name = m[1];
        i += m[0].length;
        if (name === "mathrm" || name === "text") {
          const [body, next] = group(s, i);
          out.push({ text: body, italic: false, level });
          i = next;
        } else if (name === "tilde") {
          const [body, next] = group(s, i);
          out.push({ text: `${body}\u0303`, italic: true, level });
          i = next;
        } else if (FUNCTIONS.has(name)) {
          out.push({ text: name, italic: false, level });
        } else if (name === "times") {
          out.push({ text: level ? "\u00d7" : " \u00d7 ", italic: false, level });
          operand = false;
        } else {
          out.push({ text: SYMBOLS[name] || name, italic: !UPRIGHT.has(name), level });
        }
      } else if (c === "_" || c === "^") {
        const [body, next] = group(s, i + 1);
        mathRuns(body, c === "_" ? -1 : 1, out);
        i = next;
      } else if (c === "{" || c === "}") {
        i += 1;
      } else {
        out.push({ text: c === "-" ? "\u2212" : c, italic: /[A-Za-z]/.test(c), level });
        i += 1;
      }
    }
    return out;
  }

  /** Runs of a label: plain text with TeX between dollar signs. */
  function runs(label) {
    const out = [];
    String(label).split("$").forEach((part, j) => {
      if (j % 2) {
        mathRuns(part, 0, out);
      } else if (part) {
        out.push({ text: part, italic: false, level: 0 });
      }
    });
    const merged = [];
    for (const r of out) {
      const last = merged[merged.length - 1];
      if (last && last.italic === r.italic && last.level === r.level) {
        last.text += r.text;
      } else {
        merged.push(Object.assign({}, r));
      }
    }
    return merged;
  }

  /** The box of an element in the SVG's user units, through a rotation about a point if given. */
  function userBox(e, rotate) {
    const b = e.getBBox();
    if (!rotate) {
      return { x: b.x, y: b.y, width: b.width, height: b.height };
    }
    const [deg, cx, cy] = rotate;
    const a = (deg * Math.PI) / 180;
    const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
      .map(([px, py]) => [cx + (px - cx) * Math.cos(a) - (py - cy) * Math.sin(a),
        cy + (px - cx) * Math.sin(a) + (py - cy) * Math.cos(a)]);
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs),
      height: Math.max(...ys) - Math.min(...ys) };
  }

  function overlaps(a, b, gap) {
    return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap
      && b.y < a.y + a.height + gap;
  }

  function inside(a, r) {
    return a.x >= r.x - 0.5 && a.y >= r.y - 0.5 && a.x + a.width <= r.x + r.width + 0.5
      && a.y + a.height <= r.y + r.height + 0.5;
  }

  /**
   * What a renderer draws with: the SVG, its size in user units (w, h), the layout (narrow or wide), text
   * sizes that keep every label at least `min` CSS px, and a record of every label's box so that a label
   * with several possible places (`place`) takes the first that collides with no other.
   *
   * Reading a box forces the browser to lay out the page, which on a long chapter costs milliseconds, and a
   * drawing is redrawn on every frame of a move. So boxes are read only when a label is placed, all at once
   * (`settle`), and a label's extent relative to its anchor point is measured once and kept in `extents`
   * (shared by every drawing of one panel): the same label in another place has the same box, shifted.
   */
  class Canvas {
    constructor(svg, w, h, narrow, extents) {
      this.svg = svg;
      this.w = w;
      this.h = h;
      this.narrow = narrow;
      // In the wide layout a unit is at least NARROW_BELOW / WIDE_W CSS px: 13 units are at least 12.2 px.
      this.min = narrow ? 12 : 13;
      this.size = narrow ? { small: 13, normal: 14, large: 15 } : { small: 14, normal: 15, large: 16 };
      this.extents = extents || new Map();
      this.boxes = []; // boxes of the labels drawn so far, once settled
      this.pending = []; // labels drawn whose boxes are not read yet
    }

    add(tag, attrs) {
      const e = svgEl(tag, attrs);
      this.svg.appendChild(e);
      return e;
    }

    line(x1, y1, x2, y2, attrs) {
      return this.add("line", Object.assign({ x1, y1, x2, y2, stroke: INK, "stroke-width": 1.5 }, attrs || {}));
    }

    /** An axis line; `axis` names it, and its label (text with the same `axis`) is required by the tests. */
    axis(name, x1, y1, x2, y2, attrs) {
      return this.line(x1, y1, x2, y2, Object.assign({ class: "book-panel-axis", "data-axis": name }, attrs || {}));
    }

    path(points, attrs) {
      const d = points.map(([x, y], i) => `${i ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`).join("");
      return this.add("path", Object.assign({ d, fill: "none", stroke: INK, "stroke-width": 2 }, attrs || {}));
    }

    /** The text element of a label at (x, y), not yet in the drawing (see `text` for the options). */
    label(x, y, label, o) {
      const size = Math.max(this.min, typeof o.size === "number" ? o.size : this.size[o.size || "normal"]);
      const script = Math.max(this.min, Math.round(size * 0.8));
      const e = svgEl("text", {
        x, y, fill: o.fill || INK, "font-size": size, "text-anchor": o.anchor, "font-weight": o.weight,
        transform: o.rotate ? `rotate(${o.rotate} ${x} ${y})` : undefined,
        class: o.axis ? "book-panel-axis-label" : undefined, "data-axis": o.axis,
      });
      let shift = 0; // px the baseline is moved down now
      let italic = false; // whether the run before was italic
      for (const r of runs(label)) {
        const want = r.level < 0 ? 0.28 * size : r.level > 0 ? -0.4 * size : 0;
        // a serif italic has a smaller x-height than the sans around it: its letters are set a tenth larger
        const px = (r.level ? script : size) * (r.italic ? 1.1 : 1);
        e.appendChild(svgEl("tspan", {
          dx: r.level > 0 && italic ? (0.1 * size).toFixed(2) : undefined, // clear of an italic's overhang
          dy: want !== shift ? (want - shift).toFixed(2) : undefined,
          "font-size": px !== size ? px.toFixed(1) : undefined,
          "font-style": r.italic ? "italic" : undefined, class: r.italic ? "m" : undefined,
        }, r.text));
        shift = want;
        italic = r.italic;
      }
      return e;
    }

    /**
     * A label at (x, y): plain text with TeX between dollar signs, set as tspans (italic letters, sub- and
     * superscripts). opts: size ("small", "normal", "large" or units), anchor, weight, fill, rotate (degrees,
     * about the anchor point), axis (the axis it labels). A white halo is drawn behind it, so that it stays
     * legible where it crosses a grid line or a curve: a copy, drawn first (a stroke on the label itself
     * would paint each tspan's halo over its neighbour's glyphs).
     */
    text(x, y, label, opts) {
      const o = opts || {};
      const e = this.label(x, y, label, o);
      const halo = e.cloneNode(true);
      halo.setAttribute("class", "halo");
      halo.setAttribute("aria-hidden", "true");
      halo.removeAttribute("data-axis");
      this.svg.append(halo, e);
      this.pending.push({ e, rotate: o.rotate ? [o.rotate, x, y] : null });
      return e;
    }

    /** Read the boxes of the labels drawn since the last call (one layout for all of them). */
    settle() {
      this.boxes.push(...this.pending.map(({ e, rotate }) => userBox(e, rotate)));
      this.pending = [];
    }

    /** The boxes of `labels` set at the origin with `opts` (anchored at their start), measured once each. */
    extentsOf(labels, opts) {
      const o = Object.assign({}, opts, { anchor: "start" });
      const key = (l) => `${o.size || ""}|${o.weight || ""}|${l}`;
      const missing = [...new Set(labels.filter((l) => !this.extents.has(key(l))))];
      if (this.extents.size + missing.length > 2000) {
        this.extents.clear(); // a reader dragging a slider makes new labels at every step: keep the store small
        missing.splice(0, missing.length, ...new Set(labels));
      }
      const probes = missing.map((l) => {
        const e = this.label(0, 0, l, o);
        this.svg.appendChild(e);
        return e;
      });
      probes.forEach((e, i) => this.extents.set(key(missing[i]), userBox(e))); // one layout for them all
      probes.forEach((e) => e.remove());
      return labels.map((l) => this.extents.get(key(l)));
    }

    /** The box `label` would take at (x, y) with `anchor`. */
    boxAt(label, opts, x, y, anchor) {
      const b = this.extentsOf([label], opts)[0];
      const dx = anchor === "middle" ? b.width / 2 : anchor === "end" ? b.width : 0;
      return { x: x + b.x - dx, y: y + b.y, width: b.width, height: b.height };
    }

    /** The width of a label as `text` would set it. */
    measure(label, opts) {
      return this.extentsOf([label], opts)[0].width;
    }

    /** The baseline at which `label` sits just below `bottom`, `gap` units clear of it. */
    below(bottom, label, opts, gap) {
      return bottom + (gap === undefined ? 3 : gap) - this.extentsOf([label], opts)[0].y;
    }

    /**
     * A label set from its top, `top`, in as many lines as it needs to stay within `width` (default: to 8 units
     * from the right edge), breaking at spaces outside its formulas, each line just below the one before;
     * returns the bottom of the last line.
     */
    wrap(x, top, label, opts, width) {
      const room = width || this.w - 8 - x;
      const words = [];
      let word = "";
      let math = false;
      for (const c of String(label)) {
        math = c === "$" ? !math : math;
        if (c === " " && !math) {
          words.push(word);
          word = "";
        } else {
          word += c;
        }
      }
      words.push(word);
      // a line's width from its words' (measured together) and its spaces'
      const widths = this.extentsOf([...words, "a a", "aa"], opts).map((b) => b.width);
      const space = widths[words.length] - widths[words.length + 1];
      const lines = [[]];
      let used = 0;
      words.forEach((w, i) => {
        const more = (lines[lines.length - 1].length ? space : 0) + widths[i];
        if (lines[lines.length - 1].length && used + more > room) {
          lines.push([w]);
          used = widths[i];
        } else {
          lines[lines.length - 1].push(w);
          used += more;
        }
      });
      let bottom = top;
      lines.forEach((words_, i) => {
        const line = words_.join(" ");
        const y = this.below(bottom, line, opts, i ? 3 : 0);
        this.text(x, y, line, opts);
        const b = this.extentsOf([line], opts)[0];
        bottom = y + b.y + b.height;
      });
      return bottom;
    }

    /**
     * A label at the first of `spots` ([x, y, anchor]) where it collides with no label drawn before and stays
     * within `region` ({x, y, width, height}; the whole drawing if not given); the first spot if none does.
     */
    place(label, spots, opts, region) {
      this.settle();
      const r = region || { x: 0, y: 0, width: this.w, height: this.h };
      const fits = (box) => inside(box, r) && !this.boxes.some((b) => overlaps(box, b, 1));
      const spot = spots.find(([x, y, anchor]) => fits(this.boxAt(label, opts, x, y, anchor))) || spots[0];
      const [x, y, anchor] = spot;
      const e = this.text(x, y, label, Object.assign({}, opts, { anchor }));
      this.pending.pop();
      this.boxes.push(this.boxAt(label, opts, x, y, anchor));
      return e;
    }
  }

  const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  class Player {
    constructor(root) {
      this.root = root;
      this.data = JSON.parse(root.querySelector("script.book-panel-data").textContent);
      this.renderer = renderers[this.data.name];
      if (!this.renderer) {
        throw new Error(`no renderer registered for panel ${this.data.name}`);
      }
      this.beats = this.data.beats;
      this.transcript = Array.from(root.querySelectorAll(".book-panel-transcript li"));
      this.index = 0; // the first beat, drawn on load; the reader steps on
      this.progress = 1;
      this.playing = false;
      this.speed = 1;
      this.override = null; // parameter values a reader set, or null for the timeline's
      this.movingFrames = 0; // frames drawn between two beats (0 under reduced motion)
      this.timer = null;
      this.drawnWidth = 0;
      this.extents = new Map(); // labels' boxes, measured once (Canvas)
      this.build();
      this.width = Math.floor(this.stage.clientWidth); // read once: reading it at every frame forces a layout
      this.render();
      if (window.ResizeObserver) {
        new ResizeObserver((entries) => {
          this.width = Math.floor(entries[entries.length - 1].contentRect.width);
          if (this.width !== this.drawnWidth) {
            this.render();
          }
        }).observe(this.stage);
      }
    }

    build() {
      const d = this.data;
      const id = this.root.id || `panel-${d.name}`;
      const fallback = this.root.querySelector("noscript, .book-panel-static");
      this.stage = htmlEl("div", {
        class: "book-panel-stage", tabindex: "0", role: "group", "aria-roledescription": "animation",
        "aria-label": `${this.plainTitle()}. Space or K plays or pauses; arrow keys step between beats; `
          + "Home and End jump.",
      });
      this.svg = svgEl("svg", { viewBox: `0 0 ${WIDE_W} 300`, role: "img", "aria-labelledby": `${id}-now` });
      this.stage.appendChild(this.svg);
      this.now = htmlEl("p", { class: "book-panel-now", id: `${id}-now`, "aria-live": "polite" });
      if (fallback) {
        fallback.replaceWith(this.stage); // the static figure, for readers without JavaScript
      } else {
        this.root.prepend(this.stage);
      }
      this.stage.after(this.now);

      const bar = htmlEl("div", { class: "book-panel-controls", role: "group", "aria-label": "Playback" });
      this.backButton = htmlEl("button", { type: "button", class: "book-panel-back",
        "aria-label": "Back one beat" }, "\u2190 Back");
      this.backButton.addEventListener("click", () => this.step(-1));
      this.nextButton = htmlEl("button", { type: "button", class: "book-panel-next",
        "aria-label": "Next beat" }, "Next \u2192");
      this.nextButton.addEventListener("click", () => this.step(1));
      this.playButton = htmlEl("button", { type: "button", class: "book-panel-play" }, "Play");
      this.playButton.addEventListener("click", () => this.toggle());
      const scrub = htmlEl("span", { class: "book-panel-scrub" });
      const scrubLabel = htmlEl("label", { for: `${id}-beat` }, "Beat");
      this.scrubber = htmlEl("input", { type: "range", id: `${id}-beat`, min: 1, max: this.beats.length, step: 1 });
      this.scrubber.addEventListener("input", () => this.seek(Number(this.scrubber.value) - 1));
      this.counter = htmlEl("span", { class: "book-panel-counter", "aria-hidden": "true" });
      scrub.append(scrubLabel, this.scrubber, this.counter);
      const speed = htmlEl("span", { class: "book-panel-speed" });
      const speedLabel = htmlEl("label", { for: `${id}-speed` }, "Speed");
      this.speedMenu = htmlEl("select", { id: `${id}-speed` });
      for (const s of SPEEDS) {
        const option = htmlEl("option", { value: s }, `${s}\u00d7`);
        option.selected = s === this.speed;
        this.speedMenu.appendChild(option);
      }
      this.speedMenu.addEventListener("change", () => {
        this.speed = Number(this.speedMenu.value);
      });
      speed.append(speedLabel, this.speedMenu);
      bar.append(this.backButton, this.nextButton, this.playButton, scrub, speed);
      this.now.after(bar);

      this.sliders = {};
      if (d.controls && d.controls.length) {
        const params = htmlEl("div", { class: "book-panel-params", role: "group", "aria-label": "Parameters" });
        for (const c of d.controls) {
          const wrap = htmlEl("div", { class: "book-panel-param" });
          const label = htmlEl("label", { for: `${id}-${c.id}` });
          this.rich(label, c.label);
          const input = htmlEl("input", { type: "range", id: `${id}-${c.id}`, min: c.min, max: c.max, step: c.step });
          const shown = htmlEl("output", { for: `${id}-${c.id}` });
          input.addEventListener("input", () => this.setParam(c.id, Number(input.value)));
          wrap.append(label, input, shown);
          params.appendChild(wrap);
          this.sliders[c.id] = { input, shown, whole: Number.isInteger(c.step) };
        }
        bar.after(params);
      }
      this.stage.addEventListener("keydown", (event) => this.key(event));
      this.root.classList.add("book-panel-live");
    }

    /** The title as words, for the stage's name (typeset math read through its MathML). */
    plainTitle() {
      const title = this.root.querySelector(".book-panel-title");
      if (!title) {
        return this.data.name;
      }
      const copy = title.cloneNode(true);
      copy.querySelectorAll("mjx-container > svg").forEach((e) => e.remove());
      return copy.textContent.replace(/\s+/g, " ").trim();
    }

    /** Fill `el` with `text`, where {key} stands for the panel's typeset symbol `key` (data.symbols). */
    rich(el, text) {
      el.replaceChildren();
      String(text).split(/\{(\w+)\}/).forEach((part, j) => {
        if (!(j % 2)) {
          if (part) {
            el.appendChild(document.createTextNode(part));
          }
          return;
        }
        const typeset = this.root.querySelector(`.book-panel-symbols [data-symbol="${part}"]`);
        if (typeset) {
          typeset.childNodes.forEach((n) => el.appendChild(n.cloneNode(true)));
        } else {
          el.appendChild(document.createTextNode((this.data.symbols || {})[part] || part));
        }
      });
      this.typesetLater(el);
    }

    /**
     * Without math typeset at build time (no Node when the book was built), the page loads MathJax after its
     * first paint (book-site.js): what was copied in is typeset then, or now if MathJax is already there.
     */
    typesetLater(el) {
      const raw = Array.from(el.querySelectorAll("span.math")).some((m) => !m.querySelector("mjx-container"));
      if (!raw) {
        return;
      }
      const typeset = () => window.MathJax.typesetPromise([el]).catch(() => {});
      if (window.MathJax && window.MathJax.typesetPromise) {
        typeset();
      } else if (document.querySelector("script[data-book-mathjax]")) {
        const watch = new MutationObserver(() => {
          if (document.documentElement.dataset.bookMath === "typeset" && window.MathJax.typesetPromise) {
            watch.disconnect();
            typeset();
          }
        });
        watch.observe(document.documentElement, { attributes: true, attributeFilter: ["data-book-math"] });
      }
    }

    /** The narration of beat i: its transcript item, copied with its typeset math. */
    narrate(i) {
      const n = this.beats.length;
      this.now.replaceChildren(document.createTextNode(`Beat ${i + 1} of ${n}. `));
      const item = this.transcript[i];
      if (!item) {
        this.now.appendChild(document.createTextNode(this.beats[i].text));
        return;
      }
      const only = item.children.length === 1 && item.firstElementChild.tagName === "P" ? item.firstElementChild : item;
      only.childNodes.forEach((node) => this.now.appendChild(node.cloneNode(true)));
      this.typesetLater(this.now);
    }

    key(event) {
      const last = this.beats.length - 1;
      const actions = {
        " ": () => this.toggle(), k: () => this.toggle(), K: () => this.toggle(), Escape: () => this.pause(),
        ArrowRight: () => this.step(1), ArrowDown: () => this.step(1),
        ArrowLeft: () => this.step(-1), ArrowUp: () => this.step(-1),
        Home: () => this.seek(0), End: () => this.seek(last),
      };
      const action = actions[event.key];
      if (action) {
        event.preventDefault();
        action();
      }
    }

    /** The state drawn now: between the previous beat and this one, with any reader-set parameters on top. */
    state() {
      const here = this.beats[this.index].state;
      const from = this.index > 0 ? this.beats[this.index - 1].state : here;
      const s = this.progress >= 1 ? Object.assign({}, here) : between(from, here, this.progress);
      return this.override ? Object.assign(s, this.override) : s;
    }

    layout() {
      const width = this.width;
      const narrow = width > 0 && width < NARROW_BELOW;
      const w = narrow ? Math.max(260, width) : WIDE_W;
      return { w, h: this.renderer.height(narrow, w), narrow, width };
    }

    render() {
      const s = this.state();
      const { w, h, narrow, width } = this.layout();
      this.drawnWidth = width;
      this.svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
      this.root.dataset.layout = narrow ? "narrow" : "wide";
      this.svg.replaceChildren();
      this.renderer.draw(new Canvas(this.svg, w, h, narrow, this.extents), s, this.data);
      const n = this.beats.length;
      this.scrubber.value = this.index + 1;
      this.scrubber.setAttribute("aria-valuetext", `beat ${this.index + 1} of ${n}`);
      this.counter.textContent = `${this.index + 1} / ${n}`;
      if (this.progress >= 1) {
        if (this.override) {
          this.rich(this.now, this.renderer.describe(s, this.data));
        } else if (this.narrated !== this.index) {
          this.narrate(this.index);
        }
        this.narrated = this.override ? null : this.index;
      }
      this.backButton.setAttribute("aria-disabled", String(this.index === 0));
      this.nextButton.setAttribute("aria-disabled", String(this.index === n - 1));
      this.playButton.textContent = this.playing ? "Pause" : "Play";
      this.playButton.setAttribute("aria-label", this.playing ? "Pause the animation" : "Play the animation");
      for (const [key, { input, shown, whole }] of Object.entries(this.sliders)) {
        if (key in s) {
          if (document.activeElement !== input) {
            input.value = s[key];
          }
          // a count (a slider in whole steps) moving between two beats is shown as the count drawn
          shown.textContent = number(whole ? Math.round(s[key]) : s[key], 3).replace(/^-/, "\u2212");
        }
      }
      this.root.dataset.beat = String(this.index);
      this.root.dataset.progress = String(this.progress);
      this.root.dataset.playing = String(this.playing);
    }

    /** How long beat i stays once drawn, at 1x: in proportion to the words of its narration. */
    holdMs(i) {
      return this.beats[i].words * this.data.msPerWord;
    }

    toggle() {
      if (this.playing) {
        this.pause();
      } else {
        this.play();
      }
    }

    play() {
      this.override = null;
      if (this.index === this.beats.length - 1) {
        this.index = 0; // from the start again
      }
      this.progress = 1;
      this.playing = true;
      this.render();
      this.schedule(this.holdMs(this.index)); // hold the beat shown, then move on
    }

    pause() {
      this.playing = false;
      clearTimeout(this.timer);
      cancelAnimationFrame(this.frame);
      this.progress = 1;
      this.render();
    }

    seek(i) {
      this.pause();
      this.override = null;
      this.index = i;
      this.render();
    }

    step(by) {
      this.seek(Math.min(this.beats.length - 1, Math.max(0, this.index + by)));
    }

    setParam(id, value) {
      this.pause();
      this.override = Object.assign({}, this.beats[this.index].state, this.override || {}, { [id]: value });
      this.render();
    }

    schedule(ms) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.advance(), ms / this.speed);
    }

    advance() {
      if (!this.playing) {
        return;
      }
      if (this.index >= this.beats.length - 1) {
        this.pause();
        return;
      }
      this.index += 1;
      const hold = this.holdMs(this.index);
      if (reducedMotion()) {
        this.progress = 1; // the finished state at once; nothing moves
        this.render();
        this.schedule(hold);
        return;
      }
      const move = this.data.moveMs;
      const start = performance.now();
      this.progress = 0;
      const frame = (now) => {
        if (!this.playing) {
          return;
        }
        // a frame's timestamp can precede the performance.now() taken when the move began: never before 0
        this.progress = Math.max(0, Math.min(1, ((now - start) * this.speed) / move));
        if (this.progress < 1) {
          this.movingFrames += 1;
        }
        this.render();
        if (this.progress < 1) {
          this.frame = requestAnimationFrame(frame);
        } else {
          this.schedule(hold);
        }
      };
      this.frame = requestAnimationFrame(frame);
    }
  }

  function start() {
    document.querySelectorAll(".book-panel").forEach((root) => {
      if (!root.bookPanel) {
        root.bookPanel = new Player(root);
      }
    });
  }

  window.BookPanels = {
    register(name, renderer) {
      renderers[name] = renderer;
    },
    compute(name, params, data) {
      return renderers[name].compute(params, data);
    },
    svgEl,
    number,
    signed,
    runs,
    start,
  };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    setTimeout(start, 0);
  }
})();
