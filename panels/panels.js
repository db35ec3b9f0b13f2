/* The six panels' drawings, for the player in player.js.
 *
 * Each renderer draws one state into a 640 x 300 SVG. Numbers that belong to
 * a beat come from the panel's data (chapter_code/panels/data.py); where a
 * reader moves a slider, `compute` recomputes the same quantity as the Python
 * function named beside it, and the browser tests compare the two.
 */
(function () {
  "use strict";

  const P = window.BookPanels;
  const el = P.svgEl;
  const fmt = P.number;
  const INK = "#1a1a1a";
  const GREY = "#595959"; // 7:1 on white
  const BLUE = "#0072B2"; // the book's LSTM blue, 5:1 on white
  const WINE = "#882255"; // the gradient, 9:1 on white
  const GREEN = "#007A5A"; // the GRU green, darkened to 5:1 on white
  const PALE = "#cfe3f1";

  function text(svg, x, y, s, attrs) {
    svg.appendChild(el("text", Object.assign({ x, y, fill: INK, "font-size": 14 }, attrs || {}), s));
  }

  function line(svg, x1, y1, x2, y2, attrs) {
    svg.appendChild(el("line", Object.assign({ x1, y1, x2, y2, stroke: INK, "stroke-width": 1.5 }, attrs || {})));
  }

  function path(svg, points, attrs) {
    const d = points.map(([x, y], i) => `${i ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`).join("");
    svg.appendChild(el("path", Object.assign({ d, fill: "none", stroke: INK, "stroke-width": 2 }, attrs || {})));
  }

  /** A log axis from `low` to `high` (powers of ten) over [top, bottom]; returns the value -> y map. */
  function logAxis(svg, low, high, top, bottom, left, right, every) {
    const lo = Math.log10(low);
    const hi = Math.log10(high);
    const y = (v) => {
      const l = Math.min(hi, Math.max(lo, v > 0 ? Math.log10(v) : lo));
      return bottom - ((l - lo) / (hi - lo)) * (bottom - top);
    };
    for (let e = Math.ceil(lo); e <= hi; e += every) {
      line(svg, left, y(10 ** e), right, y(10 ** e), { stroke: "#e3e3e3", "stroke-width": 1 });
      text(svg, left - 6, y(10 ** e) + 4, e === 0 ? "1" : `10${fmt(10 ** e, 1).split("10")[1]}`,
        { "text-anchor": "end", "font-size": 12 });
    }
    line(svg, left, top, left, bottom);
    line(svg, left, bottom, right, bottom);
    return y;
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
    describe(s, data) {
      const r = oneUnit(s, data);
      return `Your setting: w = ${fmt(s.w, 3)}, x = ${fmt(s.x, 3)}. The state reaches ${fmt(r.states[data.steps], 3)}; `
        + `${data.steps} steps back the measured product is ${fmt(r.products[data.steps])} and the bound `
        + `${fmt(r.bounds[data.steps])}.`;
    },
    draw(svg, s, data) {
      const r = oneUnit(s, data);
      const left = 70;
      const right = 620;
      const y = logAxis(svg, data.floor, 1e30, 30, 250, left, right, 10);
      const x = (d) => left + (d / data.steps) * (right - left);
      for (let d = 0; d <= data.steps; d += 10) {
        text(svg, x(d), 268, String(d), { "text-anchor": "middle", "font-size": 12 });
      }
      text(svg, (left + right) / 2, 292, "distance T \u2212 s (steps back)", { "text-anchor": "middle", "font-size": 13 });
      path(svg, r.bounds.map((v, d) => [x(d), y(v)]), { stroke: GREY, "stroke-dasharray": "7 5" });
      path(svg, r.products.map((v, d) => [x(d), y(v)]), { stroke: BLUE, "stroke-width": 3 });
      text(svg, left + 10, 20, `w = ${fmt(s.w, 3)}, x = ${fmt(s.x, 3)}: measured ${fmt(r.products[data.steps])}, `
        + `bound ${fmt(r.bounds[data.steps])} at ${data.steps} steps`, { "font-size": 13 });
      text(svg, right - 4, 44, "solid: measured; dashed: bound |w|\u1d48", { "text-anchor": "end", "font-size": 12 });
    },
  });

  // ------------------------------------------------------------------ truncation lanes (unroll + autograd)

  P.register("truncation-lanes", {
    describe(s, data) {
      return data.beats[data.beats.length - 1].text;
    },
    draw(svg, s, data) {
      const n = data.steps;
      const xs = (t) => 90 + ((t - 1) * 460) / (n - 1);
      const cutX = (xs(data.cut) + xs(data.cut + 1)) / 2;
      const lanes = [
        { key: "carry", y: 85, name: "carry, detached", value: s.carryValue, grad: s.carryGrad },
        { key: "reset", y: 215, name: "reset to zero", value: s.resetValue, grad: s.resetGrad },
      ];
      line(svg, cutX, 20, cutX, 290, { "stroke-dasharray": "4 4" });
      text(svg, cutX, 14, "cut", { "text-anchor": "middle", "font-size": 12 });
      for (const lane of lanes) {
        const reach = data.lanes[lane.key];
        text(svg, 10, lane.y - 36, lane.name, { "font-weight": "bold" });
        line(svg, xs(1), lane.y, xs(n), lane.y, { stroke: GREY });
        line(svg, xs(1), lane.y + 34, xs(n), lane.y + 34, { stroke: "#d9c2cf", "stroke-width": 3 });
        for (let t = 1; t <= n; t += 1) {
          const shaded = reach.value.includes(t) && t <= lane.value + 1e-9;
          const ringed = s.loss > 0 && reach.gradient.includes(t) && t >= lane.grad - 1e-9;
          svg.appendChild(el("circle", { cx: xs(t), cy: lane.y, r: 17, fill: shaded ? PALE : "#fff",
            stroke: ringed ? WINE : GREY, "stroke-width": ringed ? 4 : 1.5 }));
          text(svg, xs(t), lane.y + 5, `h${t}`, { "text-anchor": "middle", "font-size": 13 });
        }
        if (lane.key === "reset") {
          svg.appendChild(el("rect", { x: xs(data.cut + 1) - 45, y: lane.y - 10, width: 20, height: 20, fill: "#fff",
            stroke: INK }));
          text(svg, xs(data.cut + 1) - 35, lane.y + 5, "0", { "text-anchor": "middle", "font-size": 13 });
        } else {
          svg.appendChild(el("rect", { x: cutX - 22, y: lane.y - 24, width: 44, height: 16, fill: "#fff", stroke: INK }));
          text(svg, cutX, lane.y - 12, "detach", { "text-anchor": "middle", "font-size": 11 });
        }
        text(svg, xs(data.marked), lane.y + 62, `x${data.marked} \u2191`, { "text-anchor": "middle", "font-size": 12 });
        if (lane.value >= data.marked) {
          svg.appendChild(el("circle", { cx: xs(lane.value), cy: lane.y - 26, r: 6, fill: BLUE }));
        }
        if (s.loss > 0) {
          const gx = xs(Math.min(n, lane.grad));
          svg.appendChild(el("path", { d: `M${gx - 8},${lane.y + 34}L${gx + 6},${lane.y + 27}L${gx + 6},${lane.y + 41}Z`,
            fill: WINE }));
          text(svg, xs(n) + 28, lane.y + 5, `L${n}`, { fill: WINE, "font-weight": "bold" });
        }
        if (s.verdict > 0) {
          const valueCrosses = Math.max(...reach.value) > data.cut;
          const gradCrosses = Math.min(...reach.gradient) <= data.cut;
          text(svg, cutX + 8, lane.y + 56, `value ${valueCrosses ? "crosses" : "stops"}; gradient `
            + `${gradCrosses ? "crosses" : "stops"}`, { "font-size": 13, "font-weight": "bold" });
        }
      }
    },
  });

  // ------------------------------------------------------------------ LSTM gates (lstm_update)

  P.register("lstm-gates", {
    describe(s) {
      return `f = ${fmt(s.f)}, i = ${fmt(s.i)}, o = ${fmt(s.o)}: c = ${fmt(s.c, 3)}, h = ${fmt(s.h, 3)}.`;
    },
    draw(svg, s) {
      const gates = [["forget f", s.f], ["input i", s.i], ["output o", s.o]];
      gates.forEach(([name, v], j) => {
        const x = 30 + j * 75;
        svg.appendChild(el("rect", { x, y: 60, width: 44, height: 180, fill: "#fff", stroke: INK }));
        const open = Math.min(1, Math.max(0, v)); // a gate lies in [0, 1]; the bar never leaves its box
        svg.appendChild(el("rect", { x, y: 60 + 180 * (1 - open), width: 44, height: 180 * open, fill: BLUE }));
        text(svg, x + 22, 52, fmt(v, 2), { "text-anchor": "middle" });
        text(svg, x + 22, 260, name, { "text-anchor": "middle", "font-size": 13 });
      });
      text(svg, 30, 24, "gate openings", { "font-weight": "bold" });
      const zero = 470;
      const scale = 120; // px per unit, the axis from -1 to 1
      const rows = [["c\u209c\u208b\u2081 (carried in)", s.cPrev, 80, GREY], ["c\u209c (carried on)", s.c, 150, BLUE],
        ["h\u209c (shown)", s.h, 220, GREEN]];
      line(svg, zero, 50, zero, 245, { stroke: GREY });
      text(svg, zero - scale, 275, "\u22121", { "text-anchor": "middle", "font-size": 12 });
      text(svg, zero, 275, "0", { "text-anchor": "middle", "font-size": 12 });
      text(svg, zero + scale, 275, "1", { "text-anchor": "middle", "font-size": 12 });
      line(svg, zero - scale, 250, zero + scale, 250, { stroke: GREY });
      for (const [name, v, y, color] of rows) {
        const w = v * scale;
        svg.appendChild(el("rect", { x: Math.min(zero, zero + w), y: y - 14, width: Math.abs(w), height: 28, fill: color }));
        text(svg, 255, y + 5, name, { "font-size": 13 });
        text(svg, zero + (v >= 0 ? -6 : 6), y - 20, fmt(v, 3), { "text-anchor": v >= 0 ? "end" : "start", "font-size": 13 });
      }
      text(svg, 255, 18, `c\u209c = ${fmt(s.f)} \u00d7 ${fmt(s.cPrev, 3)} + ${fmt(s.i)} \u00d7 ${fmt(s.g)} = `
        + `${fmt(s.c, 3)}`, { "font-size": 13 });
      text(svg, 255, 38, `h\u209c = ${fmt(s.o)} \u00d7 tanh(c\u209c) = ${fmt(s.h, 3)}`, { "font-size": 13 });
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
    describe(s, data) {
      const c = forgetCurve(s, data);
      return `Your setting: b_f = ${fmt(s.b, 3)}, f = ${fmt(1 / (1 + Math.exp(-s.b)), 3)}; after ${data.mark} steps `
        + `${fmt(c[data.mark - 1])}, after ${data.steps} steps ${fmt(c[data.steps - 1])}.`;
    },
    draw(svg, s, data) {
      const left = 70;
      const right = 600;
      const y = logAxis(svg, data.floor, 1, 40, 250, left, right, 20);
      const x = (k) => left + ((k - 1) / (data.steps - 1)) * (right - left);
      for (const k of [1, 20, 40, 60, 80].filter((k) => k <= data.steps)) {
        text(svg, x(k), 268, String(k), { "text-anchor": "middle", "font-size": 12 });
      }
      text(svg, (left + right) / 2, 292, "steps k along the direct path", { "text-anchor": "middle", "font-size": 13 });
      const ref = forgetCurve({ b: data.reference }, data);
      path(svg, ref.map((v, j) => [x(j + 1), y(v)]), { stroke: GREY, "stroke-dasharray": "7 5" });
      const c = forgetCurve(s, data);
      path(svg, c.map((v, j) => [x(j + 1), y(v)]), { stroke: BLUE, "stroke-width": 3 });
      for (const k of [data.mark, data.steps]) {
        svg.appendChild(el("circle", { cx: x(k), cy: y(c[k - 1]), r: 5, fill: BLUE }));
        text(svg, x(k) + (k === data.steps ? -8 : 8), y(c[k - 1]) - 10, `f${k === data.steps ? "\u2078\u2070" : "\u00b2\u2070"}`
          + ` = ${fmt(c[k - 1])}`, { "text-anchor": k === data.steps ? "end" : "start", "font-size": 13 });
      }
      const f = 1 / (1 + Math.exp(-s.b));
      text(svg, left + 10, 24, `b_f = ${fmt(s.b, 3)}: f = \u03c3(b_f) = ${fmt(f, 3)}   (dashed: b_f = ${fmt(data.reference)})`,
        { "font-size": 13 });
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
    describe(s, data) {
      const r = dial(s, data);
      return `Your setting: keep u = ${fmt(s.u, 3)}: ${fmt(r.kept, 3)} kept plus ${fmt(r.written, 3)} written gives `
        + `${fmt(r.new, 3)}.`;
    },
    draw(svg, s, data) {
      const r = dial(s, data);
      const x = (v) => 320 + v * 250;
      line(svg, x(-1), 90, x(1), 90, { stroke: GREY });
      for (const v of [-1, 0, 1]) {
        line(svg, x(v), 84, x(v), 96, { stroke: GREY });
        text(svg, x(v), 114, v === -1 ? "\u22121" : String(v), { "text-anchor": "middle", "font-size": 12 });
      }
      svg.appendChild(el("circle", { cx: x(data.old), cy: 90, r: 8, fill: GREEN }));
      text(svg, x(data.old), 64, `old ${fmt(data.old)}`, { "text-anchor": "middle", "font-size": 13 });
      const c = x(data.candidate);
      svg.appendChild(el("path", { d: `M${c},80L${c + 10},90L${c},100L${c - 10},90Z`, fill: "#fff", stroke: GREEN,
        "stroke-width": 2.5 }));
      text(svg, c, 64, `candidate ${fmt(data.candidate)}`, { "text-anchor": "middle", "font-size": 13 });
      svg.appendChild(el("circle", { cx: x(r.new), cy: 90, r: 13, fill: "none", stroke: INK, "stroke-width": 3 }));
      text(svg, x(r.new), 140, `new ${fmt(r.new, 3)}`, { "text-anchor": "middle", "font-weight": "bold" });
      // the share bar: write on the left, keep on the right
      const barX = 120;
      const barW = 400;
      svg.appendChild(el("rect", { x: barX, y: 160, width: barW, height: 22, fill: "#fff", stroke: INK }));
      svg.appendChild(el("rect", { x: barX + barW * (1 - s.u), y: 160, width: barW * s.u, height: 22, fill: GREEN }));
      text(svg, barX - 6, 176, `write ${fmt(1 - s.u, 3)}`, { "text-anchor": "end", "font-size": 13 });
      text(svg, barX + barW + 6, 176, `keep ${fmt(s.u, 3)}`, { "font-size": 13 });
      // the dial: a half circle from write-all (left) to keep-all (right)
      const cx = 320;
      const cy = 285;
      const rad = 80;
      path(svg, Array.from({ length: 31 }, (_, j) => [cx - rad * Math.cos((Math.PI * j) / 30),
        cy - rad * Math.sin((Math.PI * j) / 30)]), { stroke: GREY });
      const a = Math.PI * s.u;
      line(svg, cx, cy, cx - (rad - 8) * Math.cos(a), cy - (rad - 8) * Math.sin(a), { "stroke-width": 3.5 });
      text(svg, cx - rad - 10, cy - 4, "write all", { "text-anchor": "end", "font-size": 12 });
      text(svg, cx + rad + 10, cy - 4, `keep all   (u = ${fmt(s.u, 3)})`, { "font-size": 12 });
      text(svg, 20, 24, `${fmt(s.u, 3)} \u00d7 ${fmt(data.old)} + ${fmt(1 - s.u, 3)} \u00d7 ${fmt(data.candidate)} = `
        + `${fmt(r.kept, 3)} + ${fmt(r.written, 3)} = ${fmt(r.new, 3)}`, { "font-size": 13 });
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
    describe(s, data) {
      const r = sampling(s, data);
      const n = r.nucleus.filter((v) => v > 0).length;
      return `Your setting: \u03c4 = ${fmt(s.tau, 3)}, k = ${r.k}, p = ${fmt(s.p, 3)}. softmax(z / \u03c4) gives a `
        + `${fmt(r.temperature[0])} and f ${fmt(r.temperature[r.temperature.length - 1])}; top-${r.k} keeps `
        + `${keptNames(r.topK, data)}; the nucleus keeps ${n} token${n === 1 ? "" : "s"}, ${keptNames(r.nucleus, data)}.`;
    },
    draw(svg, s, data) {
      const r = sampling(s, data);
      const nKept = (dist) => dist.filter((v) => v > 0).length;
      const columns = [
        { x: 14, title: "softmax(z / \u03c4)", dist: r.temperature },
        { x: 222, title: `top-k, k = ${r.k}: ${nKept(r.topK)} kept`, dist: r.topK },
        { x: 430, title: `nucleus, p = ${fmt(s.p, 3)}: ${nKept(r.nucleus)} kept`, dist: r.nucleus },
      ];
      const rowY = (i) => 66 + i * 35;
      const barLeft = 44;
      const barMax = 112; // px for probability 1
      text(svg, 14, 20, `\u03c4 = ${fmt(s.tau, 3)}; logits z = (${data.logits.map((v) => fmt(v)).join(", ")})`
        .replace(/-/g, "\u2212"), { "font-size": 13 });
      columns.forEach((col, j) => {
        text(svg, col.x, 48, col.title, { "font-weight": "bold", "font-size": 13 });
        data.tokens.forEach((name, i) => {
          const y = rowY(i);
          text(svg, col.x + 4, y + 16, name, { "font-size": 14 });
          if (j > 0) { // what the temperature gave this token before the cut, hollow
            svg.appendChild(el("rect", { x: col.x + barLeft, y, width: barMax * r.temperature[i], height: 22,
              fill: "none", stroke: GREY, "stroke-dasharray": "3 2" }));
          }
          const v = col.dist[i];
          if (v > 0) {
            svg.appendChild(el("rect", { x: col.x + barLeft, y: y + 3, width: barMax * v, height: 16, fill: BLUE }));
          }
          text(svg, col.x + barLeft + barMax * Math.max(v, j > 0 ? r.temperature[i] : 0) + 4, y + 16,
            v > 0 ? fmt(v) : "cut", { "font-size": 12, fill: v > 0 ? INK : WINE });
        });
      });
      text(svg, 14, 292, "filled: the distribution a token is drawn from; dashed: softmax(z / \u03c4) before the cut",
        { "font-size": 12, fill: GREY });
    },
  });
})();
