/* The book's panel player: one small script shared by every interactive panel.
 *
 * A panel is an element `.book-panel` holding its data as JSON
 * (`script.book-panel-data`, written at build time by chapter_code/panels/data.py)
 * and a static figure for readers without JavaScript (in <noscript>). The
 * player puts an SVG stage in its place, draws the final beat on load (paused), and
 * adds the controls: play/pause, a scrubber over the beats, a speed menu, and
 * the panel's own parameter sliders. Keyboard, when the stage has focus:
 * Space or K plays/pauses, arrows step between beats, Home/End jump to the
 * first/last beat, Escape pauses. Moving a parameter slider pauses and redraws
 * the current beat with the reader's value; playing or scrubbing returns to the
 * timeline's values. With prefers-reduced-motion, each beat is drawn finished:
 * nothing moves between beats.
 *
 * Drawing is delegated to the panel's renderer, registered by name with
 * BookPanels.register(name, {draw(svg, state, data), compute?}); see panels.js.
 * Plain JavaScript and SVG; no framework, nothing fetched from anywhere.
 */
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const SPEEDS = [0.5, 1, 1.5, 2];
  const MOVE_SHARE = 0.45; // share of a beat spent moving; the rest holds the finished state
  const renderers = {};

  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      e.setAttribute(k, String(v));
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
      this.index = this.beats.length - 1; // the final state, drawn on load
      this.progress = 1;
      this.playing = false;
      this.speed = 1;
      this.override = null; // parameter values a reader set, or null for the timeline's
      this.movingFrames = 0; // frames drawn between two beats (0 under reduced motion)
      this.timer = null;
      this.build();
      this.render();
    }

    build() {
      const d = this.data;
      const id = this.root.id || `panel-${d.name}`;
      const fallback = this.root.querySelector("noscript, .book-panel-static");
      this.stage = htmlEl("div", {
        class: "book-panel-stage", tabindex: "0", role: "group", "aria-roledescription": "animation",
        "aria-label": `${d.title}. Space or K plays or pauses; arrow keys step between beats; Home and End jump.`,
      });
      this.svg = svgEl("svg", { viewBox: "0 0 640 300", role: "img", "aria-labelledby": `${id}-now` });
      this.stage.appendChild(this.svg);
      this.now = htmlEl("p", { class: "book-panel-now", id: `${id}-now`, "aria-live": "polite" });
      if (fallback) {
        fallback.replaceWith(this.stage); // the static figure, for readers without JavaScript
      } else {
        this.root.prepend(this.stage);
      }
      this.stage.after(this.now);

      const bar = htmlEl("div", { class: "book-panel-controls", role: "group", "aria-label": "Playback" });
      this.playButton = htmlEl("button", { type: "button", class: "book-panel-play" }, "Play");
      this.playButton.addEventListener("click", () => this.toggle());
      const scrubLabel = htmlEl("label", { for: `${id}-beat` }, "Beat");
      this.scrubber = htmlEl("input", { type: "range", id: `${id}-beat`, min: 1, max: this.beats.length, step: 1 });
      this.scrubber.addEventListener("input", () => this.seek(Number(this.scrubber.value) - 1));
      this.counter = htmlEl("span", { class: "book-panel-counter", "aria-hidden": "true" });
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
      bar.append(this.playButton, scrubLabel, this.scrubber, this.counter, speedLabel, this.speedMenu);
      this.now.after(bar);

      this.sliders = {};
      if (d.controls && d.controls.length) {
        const params = htmlEl("div", { class: "book-panel-params", role: "group", "aria-label": "Parameters" });
        for (const c of d.controls) {
          const wrap = htmlEl("div", { class: "book-panel-param" });
          const label = htmlEl("label", { for: `${id}-${c.id}` }, c.label);
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

    key(event) {
      const last = this.beats.length - 1;
      const actions = {
        " ": () => this.toggle(), k: () => this.toggle(), K: () => this.toggle(), Escape: () => this.pause(),
        ArrowRight: () => this.seek(Math.min(last, this.index + 1)), ArrowDown: () => this.seek(Math.min(last, this.index + 1)),
        ArrowLeft: () => this.seek(Math.max(0, this.index - 1)), ArrowUp: () => this.seek(Math.max(0, this.index - 1)),
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

    render() {
      const s = this.state();
      while (this.svg.firstChild) {
        this.svg.removeChild(this.svg.firstChild);
      }
      this.renderer.draw(this.svg, s, this.data);
      const n = this.beats.length;
      this.scrubber.value = this.index + 1;
      this.scrubber.setAttribute("aria-valuetext", `beat ${this.index + 1} of ${n}`);
      this.counter.textContent = `${this.index + 1} / ${n}`;
      if (this.progress >= 1) {
        this.now.textContent = this.override
          ? this.renderer.describe(s, this.data)
          : `Beat ${this.index + 1} of ${n}. ${this.beats[this.index].text}`;
      }
      this.playButton.textContent = this.playing ? "Pause" : "Play";
      this.playButton.setAttribute("aria-label", this.playing ? "Pause the animation" : "Play the animation");
      for (const [key, { input, shown, whole }] of Object.entries(this.sliders)) {
        if (key in s) {
          if (document.activeElement !== input) {
            input.value = s[key];
          }
          // a count (a slider in whole steps) moving between two beats is shown as the count drawn
          shown.textContent = number(whole ? Math.round(s[key]) : s[key], 3);
        }
      }
      this.root.dataset.beat = String(this.index);
      this.root.dataset.progress = String(this.progress);
      this.root.dataset.playing = String(this.playing);
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
        this.progress = 1;
      }
      this.playing = true;
      this.render();
      this.schedule(this.data.beatMs * (1 - MOVE_SHARE)); // hold the current beat, then move on
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
      const move = this.data.beatMs * MOVE_SHARE;
      if (reducedMotion()) {
        this.progress = 1; // the finished state at once; nothing moves
        this.render();
        this.schedule(this.data.beatMs);
        return;
      }
      const start = performance.now();
      this.progress = 0;
      const step = (now) => {
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
          this.frame = requestAnimationFrame(step);
        } else {
          this.schedule(this.data.beatMs - move);
        }
      };
      this.frame = requestAnimationFrame(step);
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
    start,
  };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    setTimeout(start, 0);
  }
})();
