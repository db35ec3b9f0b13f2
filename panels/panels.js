/* The six panels' drawings, for the player in player.js.
 *
 * Each renderer draws one state on a Canvas (player.js): `g.w` x `g.h` user
 * units, 640 wide in the wide layout and the stage's own width in CSS px in the
 * narrow one (`g.narrow`, below 600 px), with `height(narrow, w)` telling the
 * player how tall. Labels are set with `g.text` (TeX between dollar signs for
 * the math: italic letters, sub- and superscripts) or `g.place` (the first of
 * several spots where the label collides with none drawn before); every axis
 * drawn with `g.axis` has a label naming what it measures. Numbers that belong
 * to a beat come from the panel's data (chapter_code/panels/data.py); where a
 * reader moves a slider, `compute` recomputes the same quantity as the Python
 * function named beside it, and the browser tests compare the two.
 */
(function () {
  "use strict";

  const P = window.BookPanels;
  const sg = P.signed; // a number as the drawings set it: a true minus sign, a power of ten as a superscript
  const fmt = sg;
  const say = (v, d) => P.number(v, d).replace(/^-/, "\u2212"); // a number in a sentence under the drawing
  const INK = "#1a1a1a";
  const GREY = "#595959"; // 7:1 on white
  const BLUE = "#0072B2"; // the book's LSTM blue, 5:1 on white
  const WINE = "#882255"; // the gradient, 9:1 on white
  const GREEN = "#007A5A"; // the GRU green, darkened to 5:1 on white
  const PALE = "#cfe3f1";
  const GRID = "#e3e3e3";

  /** 10 to the power e, as a tick label: 1, or 10 with the exponent as a superscript. */
  const power = (e) => (e === 0 ? "1" : `$10^{${e}}$`);

  /**
   * A legend: a short line sample before each label, left to right from x, its top at `top`, wrapping at the
   * right edge; returns its bottom.
   */
  function legend(g, x, top, items) {
    const opts = { size: "small" };
    const boxes = g.extentsOf(items.map((item) => item.label), opts);
    const rise = Math.max(...boxes.map((b) => -b.y));
    const depth = Math.max(...boxes.map((b) => b.y + b.height));
    let at = x;
    let row = top + rise;
    items.forEach((item, i) => {
      const width = 30 + boxes[i].width;
      if (at > x && at + width > g.w - 6) {
        at = x;
        row += rise + depth + 3;
      }
      g.line(at, row - 4, at + 24, row - 4, { stroke: item.stroke, "stroke-width": item.width || 2,
        "stroke-dasharray": item.dash });
      g.text(at + 30, row, item.label, opts);
      at += width + 18;
    });
    return row + depth;
  }

  /**
   * Axes of a plot with a log vertical axis from `low` to `high` (powers of ten, a tick every `every`
   * decades) over [top, bottom], and a horizontal axis to `right`, each with its label; the vertical axis
   * stands as far right as its rotated label and its widest tick label need. Returns {y: value -> y, left}.
   */
  function logAxes(g, o) {
    const lo = Math.log10(o.low);
    const hi = Math.log10(o.high);
    const exponents = [];
    for (let e = Math.ceil(lo); e <= hi; e += o.every) {
      exponents.push(e);
    }
    const widest = Math.max(...g.extentsOf(exponents.map(power), { size: "small" }).map((b) => b.width));
    // the rotated label's baseline: its letters (and superscripts) rise to its left, its descenders to its right
    const [label] = g.extentsOf([o.yLabel], { size: "small" });
    const labelX = 4 - label.y;
    const left = Math.ceil(labelX + label.y + label.height + 6 + widest + 6);
    const y = (v) => {
      const l = Math.min(hi, Math.max(lo, v > 0 ? Math.log10(v) : lo));
      return o.bottom - ((l - lo) / (hi - lo)) * (o.bottom - o.top);
    };
    for (const e of exponents) {
      g.line(left, y(10 ** e), o.right, y(10 ** e), { stroke: GRID, "stroke-width": 1 });
      g.text(left - 6, y(10 ** e) + 4, power(e), { anchor: "end", size: "small" });
    }
    g.axis("y", left, o.top, left, o.bottom);
    g.axis("x", left, o.bottom, o.right, o.bottom);
    g.text(labelX, (o.top + o.bottom) / 2, o.yLabel, { anchor: "middle", rotate: -90, size: "small", axis: "y" });
    g.text((left + o.right) / 2, g.h - 10, o.xLabel, { anchor: "middle", size: "small", axis: "x" });
    return { y, left };
  }

  // ------------------------------------------------------------------ one-unit RNN (one_unit_gradient)

  function oneUnit(params, data) {
    const steps = data.steps;
    const { w, x } = params;
    const states = [0];
    for (let t = 0; t < steps; t += 1) {
      states.push(Math.tanh(w * states[states.length - 1] + x));
    }
    const factors = states.slice(1).map((h) => (1 - h * h) * w);
    const products = [1];
    for (let j = factors.length - 1; j >= 0; j -= 1) {
      products.push(Math.abs(products[products.length - 1] * factors[j]));
    }
    const bounds = [];
    for (let d = 0; d <= steps; d += 1) {
      bounds.push(Math.abs(w) ** d);
    }
    return { states, factors, products, bounds };
  }

  P.register("one-unit", {
    compute: oneUnit,
    height: (narrow) => (narrow ? 350 : 310),
    describe(s, data) {
      const r = oneUnit(s, data);
      return `Your setting: {w} = ${say(s.w, 3)}, {x} = ${say(s.x, 3)}. The state reaches `
        + `${say(r.states[data.steps], 3)}; ${data.steps} steps back the measured product is `
        + `${say(r.products[data.steps])} and the bound ${say(r.bounds[data.steps])}.`;
    },
    draw(g, s, data) {
      const r = oneUnit(s, data);
      const n = data.steps;
      const setting = `$w$ = ${sg(s.w, 3)}, $x$ = ${sg(s.x, 3)}`;
      const read = `measured ${fmt(r.products[n])}, bound ${fmt(r.bounds[n])} at ${n} steps back`;
      const head = g.wrap(g.narrow ? 8 : 12, 4, `${setting}: ${read}`);
      const last = legend(g, g.narrow ? 8 : 78, head + 6, [
        { label: "measured $|\\partial h_T / \\partial h_s|$", stroke: BLUE, width: 3 },
        { label: "bound $|w|^{T-s}$", stroke: GREY, dash: "7 5" },
      ]);
      const right = g.w - (g.narrow ? 12 : 20);
      const top = last + 18;
      const bottom = g.h - 52;
      const { y, left } = logAxes(g, { low: data.floor, high: 1e30, top, bottom, right, every: 10,
        yLabel: "gradient product (log)", xLabel: "distance $T - s$ (steps back)" });
      const x = (d) => left + (d / n) * (right - left);
      for (let d = 0; d <= n; d += g.narrow ? 20 : 10) {
        g.text(x(d), bottom + 18, String(d), { anchor: "middle", size: "small" });
      }
      g.path(r.bounds.map((v, d) => [x(d), y(v)]), { stroke: GREY, "stroke-dasharray": "7 5" });
      g.path(r.products.map((v, d) => [x(d), y(v)]), { stroke: BLUE, "stroke-width": 3 });
    },
  });

  // ------------------------------------------------------------------ truncation lanes (unroll + autograd)

  P.register("truncation-lanes", {
    height: (narrow) => (narrow ? 345 : 300),
    describe() {
      return "";
    },
    draw(g, s, data) {
      const n = data.steps;
      const N = g.narrow;
      const first = N ? 28 : 90;
      const lastX = N ? g.w - 64 : 550;
      const xs = (t) => first + ((t - 1) * (lastX - first)) / (n - 1);
      const rad = N ? 14 : 17;
      const cutX = (xs(data.cut) + xs(data.cut + 1)) / 2;
      const lanes = [
        { key: "carry", y: N ? 95 : 85, name: "carry, detached", value: s.carryValue, grad: s.carryGrad },
        { key: "reset", y: N ? 255 : 215, name: "reset to zero", value: s.resetValue, grad: s.resetGrad },
      ];
      g.line(cutX, 22, cutX, g.h - 8, { "stroke-dasharray": "4 4" });
      g.text(cutX, 15, "cut", { anchor: "middle", size: "small" });
      for (const lane of lanes) {
        const reach = data.lanes[lane.key];
        const track = lane.y + (N ? 30 : 34);
        g.text(10, lane.y - (N ? 46 : 40), lane.name, { weight: "bold" });
        if (lane.key === "reset") { // the state does not pass the cut: the second chunk starts from zero
          g.line(xs(1), lane.y, xs(data.cut), lane.y, { stroke: GREY });
          g.line(cutX, lane.y, xs(n), lane.y, { stroke: GREY });
        } else {
          g.line(xs(1), lane.y, xs(n), lane.y, { stroke: GREY });
        }
        g.line(xs(1), track, xs(n), track, { stroke: "#d9c2cf", "stroke-width": 3 });
        for (let t = 1; t <= n; t += 1) {
          const shaded = reach.value.includes(t) && t <= lane.value + 1e-9;
          const ringed = s.loss > 0 && reach.gradient.includes(t) && t >= lane.grad - 1e-9;
          g.add("circle", { cx: xs(t), cy: lane.y, r: rad, fill: shaded ? PALE : "#fff",
            stroke: ringed ? WINE : GREY, "stroke-width": ringed ? 4 : 1.5 });
          g.text(xs(t), lane.y + 4, `$h_${t}$`, { anchor: "middle", size: "small" });
        }
        if (lane.key === "reset") {
          g.add("rect", { x: cutX - 7, y: lane.y - 10, width: 14, height: 20, fill: "#fff", stroke: INK });
          g.text(cutX, lane.y + 5, "0", { anchor: "middle", size: "small" });
        } else {
          const top = lane.y - (N ? 38 : 36);
          g.add("rect", { x: cutX - 27, y: top, width: 54, height: 19, fill: "#fff", stroke: INK });
          g.text(cutX, top + 14, "detach", { anchor: "middle", size: "small" });
        }
        g.text(xs(data.marked), lane.y + (N ? 52 : 60), `$x_${data.marked}$ \u2191`, { anchor: "middle",
          size: "small" });
        if (lane.value >= data.marked) {
          g.add("circle", { cx: xs(lane.value), cy: lane.y - rad - 7, r: 5, fill: BLUE });
        }
        if (s.loss > 0) {
          const gx = xs(Math.min(n, lane.grad));
          g.add("path", { d: `M${gx - 8},${track}L${gx + 6},${track - 7}L${gx + 6},${track + 7}Z`, fill: WINE });
          g.text(xs(n) + rad + 10, lane.y + 5, `$L_${n}$`, { fill: WINE, weight: "bold" });
        }
        if (s.verdict > 0) {
          const valueCrosses = Math.max(...reach.value) > data.cut;
          const gradCrosses = Math.min(...reach.gradient) <= data.cut;
          const verdict = `value ${valueCrosses ? "crosses" : "stops"}; gradient ${gradCrosses ? "crosses" : "stops"}`;
          if (N) {
            g.text(10, lane.y + 74, verdict, { weight: "bold" });
          } else {
            g.text(cutX + 8, lane.y + 60, verdict, { weight: "bold", size: "small" });
          }
        }
      }
    },
  });

  // ------------------------------------------------------------------ LSTM gates (lstm_update)

  P.register("lstm-gates", {
    height: (narrow) => (narrow ? 385 : 300),
    describe(s) {
      return `f = ${say(s.f)}, i = ${say(s.i)}, o = ${say(s.o)}: c = ${say(s.c, 3)}, h = ${say(s.h, 3)}.`;
    },
    draw(g, s) {
      const N = g.narrow;
      const gates = [["forget $f$", s.f], ["input $i$", s.i], ["output $o$", s.o]];
      const factor = (v) => (v < 0 ? `(${sg(v)})` : sg(v));
      const cell = `$c_t$ = ${fmt(s.f)} \u00d7 ${factor(s.cPrev)} + ${fmt(s.i)} \u00d7 ${factor(s.g)} = ${sg(s.c)}`;
      const shown = `$h_t$ = ${fmt(s.o)} \u00d7 $\\tanh(c_t)$ = ${sg(s.h)}`;
      const rows = [["$c_{t-1}$ (carried in)", s.cPrev, GREY], ["$c_t$ (carried on)", s.c, BLUE],
        ["$h_t$ (shown)", s.h, GREEN]];
      const open = (v) => Math.min(1, Math.max(0, v)); // a gate lies in [0, 1]; the bar never leaves its box
      let zero;
      let scale;
      let axisY;
      if (N) {
        g.wrap(8, g.wrap(8, 4, cell) + 3, shown);
        const bx = 80;
        const bw = g.w - bx - 44;
        gates.forEach(([name, v], j) => {
          const y = 70 + j * 26;
          g.text(8, y + 4, name, { size: "small" });
          g.add("rect", { x: bx, y: y - 8, width: bw, height: 16, fill: "#fff", stroke: INK });
          g.add("rect", { x: bx, y: y - 8, width: bw * open(v), height: 16, fill: BLUE });
          g.text(bx + bw + 6, y + 4, fmt(v, 2), { size: "small" });
        });
        g.axis("gate", bx, 136, bx + bw, 136);
        g.text(bx, 152, "0", { anchor: "middle", size: "small" });
        g.text(bx + bw, 152, "1", { anchor: "middle", size: "small" });
        g.text(bx + bw / 2, 152, "gate opening", { anchor: "middle", size: "small", axis: "gate" });
        zero = g.w / 2;
        scale = (g.w - 32) / 2;
        rows.forEach(([name, v, color], j) => {
          const y = 196 + j * 48;
          g.text(8, y - 14, name, { size: "small" });
          g.text(g.w - 8, y - 14, sg(v), { anchor: "end", size: "small" });
          g.add("rect", { x: Math.min(zero, zero + v * scale), y: y - 8, width: Math.abs(v * scale), height: 16,
            fill: color });
        });
        axisY = 318;
        g.line(zero, 170, zero, axisY, { stroke: GREY });
      } else {
        gates.forEach(([name, v], j) => {
          const x = 36 + j * 72;
          g.add("rect", { x, y: 60, width: 44, height: 180, fill: "#fff", stroke: INK });
          g.add("rect", { x, y: 60 + 180 * (1 - open(v)), width: 44, height: 180 * open(v), fill: BLUE });
          g.text(x + 22, 52, fmt(v, 2), { anchor: "middle" });
          g.text(x + 22, 260, name, { anchor: "middle", size: "small" });
        });
        g.axis("gate", 26, 60, 26, 240);
        g.text(20, 65, "1", { anchor: "end", size: "small" });
        g.text(20, 244, "0", { anchor: "end", size: "small" });
        g.text(36, 24, "gate opening", { weight: "bold", size: "small", axis: "gate" });
        g.wrap(255, g.wrap(255, 4, cell, { size: "small" }) + 3, shown, { size: "small" });
        zero = 470;
        scale = 120; // px per unit, the axis from -1 to 1
        rows.forEach(([name, v, color], j) => {
          const y = 96 + j * 62;
          g.text(255, y + 5, name, { size: "small" });
          g.text(zero + (v >= 0 ? -6 : 6), y - 20, sg(v), { anchor: v >= 0 ? "end" : "start", size: "small" });
          g.add("rect", { x: Math.min(zero, zero + v * scale), y: y - 14, width: Math.abs(v * scale), height: 28,
            fill: color });
        });
        axisY = 250;
        g.line(zero, 56, zero, axisY, { stroke: GREY });
      }
      g.axis("value", zero - scale, axisY, zero + scale, axisY, { stroke: GREY });
      for (const v of [-1, 0, 1]) {
        g.line(zero + v * scale, axisY - 4, zero + v * scale, axisY + 4, { stroke: GREY });
        g.text(zero + v * scale, axisY + 17, sg(v), { anchor: "middle", size: "small" });
      }
      g.text(zero, axisY + (N ? 40 : 38), "cell and hidden value", { anchor: "middle", size: "small",
        axis: "value" });
    },
  });

  // ------------------------------------------------------------------ forget-gate power (forget_power)

  function forgetCurve(params, data) {
    const f = 1 / (1 + Math.exp(-params.b));
    const out = [];
    for (let k = 1; k <= data.steps; k += 1) {
      out.push(f ** k);
    }
    return out;
  }

  P.register("forget-power", {
    compute: forgetCurve,
    height: (narrow) => (narrow ? 370 : 320),
    describe(s, data) {
      const c = forgetCurve(s, data);
      return `Your setting: {bf} = ${say(s.b, 3)}, {f} = ${say(1 / (1 + Math.exp(-s.b)), 3)}; after ${data.mark} `
        + `steps ${say(c[data.mark - 1])}, after ${data.steps} steps ${say(c[data.steps - 1])}.`;
    },
    draw(g, s, data) {
      const f = 1 / (1 + Math.exp(-s.b));
      const c = forgetCurve(s, data);
      const at = (k) => `$f^{${k}}$ = ${fmt(c[k - 1])}`;
      const x0 = g.narrow ? 8 : 12;
      const line1 = g.wrap(x0, 4, `$b_f$ = ${sg(s.b, 3)}: every gate is $f = \\sigma(b_f)$ = ${fmt(f)}`);
      const line2 = g.wrap(x0, line1 + 3, `at the dots: ${at(data.mark)} and ${at(data.steps)}`);
      const last = legend(g, g.narrow ? 8 : 78, line2 + 6, [
        { label: "the chosen bias", stroke: BLUE, width: 3 },
        { label: `$b_f$ = ${sg(data.reference)}`, stroke: GREY, dash: "7 5" },
      ]);
      const right = g.w - (g.narrow ? 14 : 24);
      const top = last + 18;
      const bottom = g.h - 52;
      const { y, left } = logAxes(g, { low: data.floor, high: 1, top, bottom, right, every: 20,
        yLabel: "share kept, $f^k$ (log)", xLabel: "steps $k$ along the direct path" });
      const x = (k) => left + ((k - 1) / (data.steps - 1)) * (right - left);
      for (const k of [1, 20, 40, 60, 80].filter((k) => k <= data.steps)) {
        g.text(x(k), bottom + 18, String(k), { anchor: "middle", size: "small" });
      }
      const ref = forgetCurve({ b: data.reference }, data);
      g.path(ref.map((v, j) => [x(j + 1), y(v)]), { stroke: GREY, "stroke-dasharray": "7 5" });
      g.path(c.map((v, j) => [x(j + 1), y(v)]), { stroke: BLUE, "stroke-width": 3 });
      for (const k of [data.mark, data.steps]) {
        g.add("circle", { cx: x(k), cy: y(c[k - 1]), r: 5, fill: BLUE });
      }
    },
  });

  // ------------------------------------------------------------------ GRU keep dial (keep_dial)

  function dial(params, data) {
    const kept = params.u * data.old;
    const written = (1 - params.u) * data.candidate;
    return { kept, written, new: kept + written };
  }

  P.register("keep-dial", {
    compute: dial,
    height: (narrow) => (narrow ? 350 : 310),
    describe(s, data) {
      const r = dial(s, data);
      return `Your setting: keep {u} = ${say(s.u, 3)}: ${say(r.kept, 3)} kept plus ${say(r.written, 3)} written `
        + `gives ${say(r.new, 3)}.`;
    },
    draw(g, s, data) {
      const N = g.narrow;
      const r = dial(s, data);
      const rule = "new = $u$ \u00d7 old + $(1 - u)$ \u00d7 candidate";
      const sum = `${fmt(s.u, 3)} \u00d7 ${sg(data.old)} + ${fmt(1 - s.u, 3)} \u00d7 ${sg(data.candidate)} = `
        + `${sg(r.new)}`;
      const lineY = N ? 118 : 100;
      const half = N ? g.w / 2 - 24 : 250;
      const x = (v) => g.w / 2 + v * half;
      if (N) {
        g.wrap(8, g.wrap(8, 4, rule) + 3, `= ${sum}`);
      } else {
        g.text(20, 24, `${rule} = ${sum}`, { size: "small" });
      }
      g.axis("state", x(-1), lineY, x(1), lineY, { stroke: GREY });
      for (const v of [-1, 0, 1]) {
        g.line(x(v), lineY - 6, x(v), lineY + 6, { stroke: GREY });
        g.text(x(v), lineY + 22, sg(v), { anchor: "middle", size: "small" });
      }
      g.text(x(-1), lineY + 42, "state value", { size: "small", axis: "state" });
      g.add("circle", { cx: x(data.old), cy: lineY, r: 8, fill: GREEN });
      const c = x(data.candidate);
      g.add("path", { d: `M${c},${lineY - 10}L${c + 10},${lineY}L${c},${lineY + 10}L${c - 10},${lineY}Z`,
        fill: "#fff", stroke: GREEN, "stroke-width": 2.5 });
      g.add("circle", { cx: x(r.new), cy: lineY, r: 13, fill: "none", stroke: INK, "stroke-width": 3 });
      const above = (v) => [[x(v), lineY - 20, "middle"], [x(v), lineY - 40, "middle"], [x(v), lineY - 60, "middle"]];
      g.place(`old ${sg(data.old)}`, above(data.old), { size: "small" });
      g.place(`candidate ${sg(data.candidate)}`, above(data.candidate), { size: "small" });
      g.place(`new ${sg(r.new)}`, [[x(r.new), lineY + 34, "middle"], [x(r.new), lineY + 54, "middle"]],
        { weight: "bold" });
      // the share bar: write on the left, keep on the right
      const barX = N ? 24 : 140;
      const barW = N ? g.w - 48 : 360;
      const barY = N ? 196 : 166;
      g.add("rect", { x: barX, y: barY, width: barW, height: 20, fill: "#fff", stroke: INK });
      g.add("rect", { x: barX + barW * (1 - s.u), y: barY, width: barW * s.u, height: 20, fill: GREEN });
      if (N) {
        g.text(barX, barY - 8, `write ${fmt(1 - s.u, 3)}`, { size: "small" });
        g.text(barX + barW, barY - 8, `keep ${fmt(s.u, 3)}`, { anchor: "end", size: "small" });
      } else {
        g.text(barX - 8, barY + 15, `write ${fmt(1 - s.u, 3)}`, { anchor: "end", size: "small" });
        g.text(barX + barW + 8, barY + 15, `keep ${fmt(s.u, 3)}`, { size: "small" });
      }
      // the dial: a half circle from write-all (left) to keep-all (right)
      const cx = g.w / 2;
      const cy = N ? 310 : 276;
      const rad = N ? 56 : 66;
      g.path(Array.from({ length: 31 }, (_, j) => [cx - rad * Math.cos((Math.PI * j) / 30),
        cy - rad * Math.sin((Math.PI * j) / 30)]), { stroke: GREY });
      const a = Math.PI * s.u;
      g.line(cx, cy, cx - (rad - 8) * Math.cos(a), cy - (rad - 8) * Math.sin(a), { "stroke-width": 3.5 });
      g.add("circle", { cx, cy, r: 4, fill: INK });
      g.text(cx - rad - 10, cy, "write all", { anchor: "end", size: "small" });
      g.text(cx + rad + 10, cy, "keep all", { size: "small" });
      g.text(cx, cy + 24, `$u$ = ${fmt(s.u, 3)}`, { anchor: "middle", size: "small" });
    },
  });

  // ------------------------------------------------------------------ sampling explorer (explorer_data: sampling.py's rules)

  /** softmax(z / tau), top-k and nucleus distributions, as temperature_probs, top_k_probs and nucleus_probs. */
  function sampling(params, data) {
    const z = data.logits;
    const tau = params.tau;
    const k = Math.min(z.length, Math.max(1, Math.round(params.k))); // a k between two beats snaps to a count
    const scaled = z.map((v) => v / tau);
    const top = Math.max(...scaled);
    const e = scaled.map((v) => Math.exp(v - top));
    const total = e.reduce((a, b) => a + b, 0);
    const q = e.map((v) => v / total);
    // ranked by the logits, ties to the first, as the Python rules rank them
    const order = z.map((_, i) => i).sort((a, b) => z[b] - z[a] || a - b);
    const keepK = z.map(() => 0);
    const keepP = z.map(() => 0);
    let sum = 0;
    order.forEach((i, rank) => {
      keepK[i] = rank < k ? 1 : 0;
      sum += q[i];
      keepP[i] = sum - q[i] < params.p ? 1 : 0; // the mass ranked above it is still below p
    });
    const renorm = (keep) => {
      const masked = q.map((v, i) => v * keep[i]);
      const s = masked.reduce((a, b) => a + b, 0);
      return masked.map((v) => v / s);
    };
    return { temperature: q, topK: renorm(keepK), nucleus: renorm(keepP), k };
  }

  function keptNames(dist, data) {
    const names = data.tokens.filter((_, i) => dist[i] > 0);
    return names.length <= 2 ? names.join(" and ") : `${names[0]} to ${names[names.length - 1]}`;
  }

  P.register("sampling-explorer", {
    compute: sampling,
    height: (narrow) => (narrow ? 350 : 330),
    describe(s, data) {
      const r = sampling(s, data);
      const n = r.nucleus.filter((v) => v > 0).length;
      return `Your setting: {tau} = ${say(s.tau, 3)}, {k} = ${r.k}, {p} = ${say(s.p, 3)}. The temperature gives a `
        + `${say(r.temperature[0])} and f ${say(r.temperature[r.temperature.length - 1])}; top-${r.k} keeps `
        + `${keptNames(r.topK, data)}; the nucleus keeps ${n} token${n === 1 ? "" : "s"}, ${keptNames(r.nucleus, data)}.`;
    },
    draw(g, s, data) {
      const N = g.narrow;
      const r = sampling(s, data);
      const nKept = (dist) => dist.filter((v) => v > 0).length;
      const logits = `logits $z$ = (${data.logits.map((v) => sg(v)).join(", ")})`;
      const softmax = "$\\mathrm{softmax}(z / \\tau)$";
      const colW = N ? (g.w - 20) / 3 : 208;
      const x0 = N ? 20 : 14;
      const columns = [
        { title: [softmax, ""], dist: r.temperature },
        { title: ["top-k", `$k$ = ${r.k}: ${nKept(r.topK)} kept`], dist: r.topK },
        { title: ["nucleus", `$p$ = ${fmt(s.p, 3)}: ${nKept(r.nucleus)} kept`], dist: r.nucleus },
      ].map((col, j) => Object.assign(col, { x: x0 + j * colW }));
      const barLeft = N ? 2 : 40;
      const barMax = N ? colW - 46 : 112; // px for probability 1
      const barH = N ? 20 : 22;
      // narrow: each column's title in two lines below the header, the rows below the titles
      const bold = { weight: "bold", size: "small" };
      const small = { size: "small" };
      let titles = [];
      let rowTop = 60;
      if (N) {
        const head = g.wrap(8, g.wrap(8, 4, `$\\tau$ = ${fmt(s.tau, 3)}`) + 3, logits, small);
        const first = g.below(head + 5, columns[0].title[0], bold);
        const b = g.extentsOf(columns.map((c) => c.title[0]), bold);
        const second = g.below(first + Math.max(...b.map((e) => e.y + e.height)) + 1, columns[1].title[1], small);
        titles = [first, second];
        const b2 = g.extentsOf(columns.map((c) => c.title[1] || "a"), small);
        rowTop = second + Math.max(...b2.map((e) => e.y + e.height)) + 6;
      } else {
        g.text(14, 20, `$\\tau$ = ${fmt(s.tau, 3)}; ${logits}`, small);
      }
      const rowY = (i) => rowTop + i * (N ? 26 : 30);
      if (N) {
        data.tokens.forEach((name, i) => g.text(6, rowY(i) + 15, name, small));
      }
      const axisY = rowY(data.tokens.length) + 2;
      columns.forEach((col, j) => {
        if (N) {
          g.text(col.x, titles[0], col.title[0], bold);
          if (col.title[1]) {
            g.text(col.x, titles[1], col.title[1], small);
          }
        } else {
          const title = j === 0 ? softmax : `${col.title[0]}, ${col.title[1]}`;
          g.text(col.x, 46, title, { weight: "bold", size: "small" });
        }
        const bar0 = col.x + barLeft;
        data.tokens.forEach((name, i) => {
          const y = rowY(i);
          if (!N) {
            g.text(col.x + 4, y + 16, name);
          }
          if (j > 0) { // what the temperature gave this token before the cut, hollow
            g.add("rect", { x: bar0, y, width: barMax * r.temperature[i], height: barH, fill: "none", stroke: GREY,
              "stroke-dasharray": "3 2" });
          }
          const v = col.dist[i];
          if (v > 0) {
            g.add("rect", { x: bar0, y: y + 3, width: barMax * v, height: barH - 6, fill: BLUE });
          }
          g.text(bar0 + barMax * Math.max(v, j > 0 ? r.temperature[i] : 0) + 4, y + (N ? 15 : 16),
            v > 0 ? fmt(v) : "cut", { size: "small", fill: v > 0 ? INK : WINE });
        });
        g.axis(`probability-${j + 1}`, bar0, axisY, bar0 + barMax, axisY, { stroke: GREY });
        const ticks = N ? [0, 1] : [0, 0.5, 1];
        for (const t of ticks) {
          g.line(bar0 + barMax * t, axisY, bar0 + barMax * t, axisY + 4, { stroke: GREY });
          g.text(bar0 + barMax * t, axisY + 17, String(t), { anchor: "middle", size: "small" });
        }
        g.text(bar0 + barMax / 2, axisY + (N ? 34 : 36), "probability", { anchor: "middle", size: "small",
          axis: `probability-${j + 1}` });
      });
      const filled = "filled: the distribution a token is drawn from;";
      const dashed = `dashed: ${softmax} before the cut`;
      if (N) {
        g.text(8, g.h - 26, filled, { size: "small", fill: GREY });
        g.text(8, g.h - 7, dashed, { size: "small", fill: GREY });
      } else {
        g.text(14, g.h - 10, `${filled} ${dashed}`, { size: "small", fill: GREY });
      }
    },
  });
})();
