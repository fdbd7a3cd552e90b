// The space-time view of a vcx trace: one lane per rank, each clocked call a
// box from its enter to its return, arrows from a message's send to its
// receive, lines joining the members of one collective. Plain canvas: the
// page must stay responsive with 100,000 calls, so a lane draws its calls
// one by one only where they are wider than a pixel and otherwise one
// column of pixels at a time.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("trace-data").textContent);
  const canvas = document.getElementById("canvas");
  const ctx = canvas.getContext("2d");
  const lanesEl = document.getElementById("lanes");
  const axisEl = document.getElementById("axis");
  const details = document.getElementById("details");
  // Lanes share the canvas's height (between 28 and 90 pixels each).
  let laneHeight = 28, boxHeight = 16;
  const topPad = 8;
  const maxArrows = 4000;

  const kinds = [
    ["collective", "#f39c12", "collective"],
    ["window", "#8e44ad", "window synchronisation"],
    ["send", "#2e86de", "send"],
    ["receive", "#27ae60", "receive, probe"],
    ["wait", "#e1b12c", "wait, test"],
    ["annotation", "#7f8fa6", "annotation"],
    ["other", "#95a5a6", "other"],
  ];
  const colorOf = Object.fromEntries(kinds.map(([k, c]) => [k, c]));
  function kindOf(name, group) {
    const n = name.toLowerCase();
    if (n.startsWith("mpi_win_")) return "window";
    if (group >= 0) return "collective";
    if (n.startsWith("vcx_annotate")) return "annotation";
    if (n.includes("recv") || n.includes("probe") || n.includes("wait_until") ||
        n.includes("_get")) return "receive";
    if (n.includes("wait") || n.includes("test")) return "wait";
    if (n.includes("send") || n.includes("put") || n.includes("signal")) return "send";
    return "other";
  }

  // Per rank: calls with times relative to the run's start.
  const ranks = data.ranks;
  const byRank = new Map(ranks.map((r) => [r.rank, r]));
  let tMax = 1;
  for (const r of ranks) {
    r.count = r.name.length;
    r.kind = r.name.map((n, i) => kindOf(data.names[n], r.group[i]));
    // The latest return so far, per call: what the lookups search (returns
    // need not grow when several threads call).
    r.endMax = new Float64Array(r.count);
    let latest = 0;
    for (let i = 0; i < r.count; ++i) r.endMax[i] = latest = Math.max(latest, r.t[2 * i + 1]);
    if (r.count) tMax = Math.max(tMax, latest);
  }

  // RMA epochs per rank, as [first call, last call]: lock to unlock,
  // lock_all to unlock_all, start to complete, post to wait, and from one
  // fence on a window to the next.
  function epochsOf(r) {
    const out = [], open = {lock: [], lock_all: [], start: [], post: []}, fence = new Map();
    const closes = {unlock: "lock", unlock_all: "lock_all", complete: "start", wait: "post",
                    test: "post"};
    for (let i = 0; i < r.count; ++i) {
      const n = data.names[r.name[i]];
      if (!n.startsWith("MPI_Win_")) continue;
      const op = n.slice(8);
      if (op in open) {
        open[op].push(i);
      } else if (op in closes && open[closes[op]].length) {
        out.push([open[closes[op]].pop(), i]);
      } else if (op === "fence") {
        const g = r.group[i];
        if (fence.has(g)) out.push([fence.get(g), i]);
        fence.set(g, i);
      }
    }
    return out;
  }
  let epochs = 0;
  for (const r of ranks) {
    r.epochs = epochsOf(r);
    epochs += r.epochs.length;
  }

  // Lanes: every rank of the world, in order.
  const lanes = [];
  for (let k = 0; k < data.world; ++k) {
    const el = document.createElement("div");
    el.className = "lane";
    el.dataset.rank = String(k);
    el.textContent = "rank " + k;
    lanesEl.appendChild(el);
    lanes.push(el);
  }
  const calls = ranks.reduce((s, r) => s + r.count, 0);
  const summary = document.getElementById("summary");
  summary.dataset.lanes = String(data.world);
  summary.dataset.calls = String(calls);
  summary.dataset.messages = String(data.messages.length);
  const wildcards = data.messages.filter((m) => m[4]).length;
  summary.dataset.wildcard = String(wildcards);
  summary.dataset.collectives = String(data.collectives.length);
  summary.dataset.epochs = String(epochs);
  // The analyses' findings (vcx-trace view --report): receives that could
  // have matched another send, data races.
  const findings = data.findings || {alternatives: [], races: []};
  // Deadlocks: per stuck rank [rank, call, line, ranks it waits for].
  const deadlocks = findings.deadlocks || [];
  const alternativesOf = new Map(findings.alternatives.map((a) => [a[0] + ":" + a[1], a]));
  summary.dataset.alternatives = String(findings.alternatives.length);
  summary.dataset.races = String(findings.races.length);
  summary.dataset.deadlocks = String(deadlocks.length);
  summary.textContent = `${data.world} ranks, ${calls} calls, ${data.messages.length} messages ` +
      `(${wildcards} to wildcard receives), ` +
      `${data.collectives.length} collectives; times ` +
      (data.timed ? (data.corrected ? `corrected for the clock condition (${data.violations} ` +
                                      `violations fixed)` : "as measured")
                  : "not recorded: calls in program order");
  document.getElementById("legend").innerHTML = kinds.map(([k, c, label]) =>
      `<span><span class="swatch" style="background:${c}"></span>${label}</span>`).join("") +
      `<span><span class="swatch" style="background:rgba(142,68,173,0.25)"></span>RMA epoch` +
      `</span><span><span class="swatch" style="background:#c0392b"></span>message</span>` +
      `<span><span class="swatch" style="background:#d81b60; outline: 2px dashed #d81b60">` +
      `</span>message to a wildcard receive (MPI_ANY_SOURCE)</span>` +
      (findings.alternatives.length ? `<span><span class="swatch" style="outline: 2px dashed ` +
       `#e65100"></span>receive that could have matched another send</span>` : "") +
      (deadlocks.length ? `<span><span class="swatch" style="background:rgba(192,57,43,0.3); ` +
       `outline: 2px solid #c0392b"></span>deadlocked: the call a rank never returned from, ` +
       `arrows to the ranks it waits for</span>` : "");

  // View: [t0, t1] of run time across the canvas.
  // A deadlocked run's calls that never returned are drawn after the
  // ranks' last calls: the run's view leaves room for them.
  const tEnd = deadlocks.length ? tMax * 1.3 : tMax;
  let t0 = 0, t1 = tEnd, width = 1, height = 1;
  let selected = null;  // {rank, index}
  let arrowsDrawn = 0, boxesDrawn = 0, wildcardArrowsDrawn = 0;
  const xOf = (t) => (t - t0) / (t1 - t0) * width;
  const tOf = (x) => t0 + x / width * (t1 - t0);
  const yOf = (rank) => topPad + rank * laneHeight;

  // First call of r from which on some call returns at or after t.
  function firstEndingAfter(r, t) {
    let lo = 0, hi = r.count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (r.endMax[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  const scroller = document.getElementById("scroll");
  function resize() {
    const dpr = window.devicePixelRatio || 1;
    const visible = Math.max(1, scroller.clientHeight);
    laneHeight = Math.max(28, Math.min(90, (visible - 2 * topPad) / Math.max(1, data.world)));
    boxHeight = Math.round(laneHeight * 0.55);
    // More ranks than fit scroll: the canvas is as tall as its lanes.
    height = Math.max(visible, 2 * topPad + data.world * laneHeight);
    canvas.style.height = lanesEl.style.height = height + "px";
    width = Math.max(1, canvas.clientWidth);
    lanes.forEach((el, k) => {
      el.style.top = yOf(k) + boxHeight / 2 - 14 + "px";
      el.style.height = el.style.lineHeight = "28px";
    });
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }

  function drawAxis() {
    const span = t1 - t0;
    const unit = span >= 2e9 ? [1e9, "s"] : span >= 2e6 ? [1e6, "ms"] : span >= 2e3 ? [1e3, "µs"]
                                                                        : [1, "ns"];
    let step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    let html = "";
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step)
      html += `<span style="left:${xOf(t)}px">${+(t / unit[0]).toFixed(3)} ${unit[1]}</span>`;
    axisEl.innerHTML = html;
  }

  function draw() {
    ctx.clearRect(0, 0, width, height);
    boxesDrawn = 0;
    for (const r of ranks) drawLane(r);
    drawCollectives();
    drawArrows();
    drawFindings();
    drawDeadlocks();
    drawSelection();
    drawAxis();
    canvas.dataset.arrows = String(arrowsDrawn);
    canvas.dataset.boxes = String(boxesDrawn);
  }

  function drawLane(r) {
    const y = yOf(r.rank);
    ctx.fillStyle = "#eceff1";
    ctx.fillRect(0, y + boxHeight / 2 - 1, width, 2);
    ctx.fillStyle = "rgba(142, 68, 173, 0.12)";
    for (const [a, b] of r.epochs) {
      const x0 = xOf(r.t[2 * a]), x1 = xOf(r.t[2 * b + 1]);
      if (x1 < 0 || x0 > width) continue;
      ctx.fillRect(x0, y - 5, Math.max(1, x1 - x0), boxHeight + 10);
    }
    const first = firstEndingAfter(r, t0);
    // Calls narrower than a pixel are summed up per pixel column: the
    // column shows the kind of the call that covers most of it.
    let column = -1, columnKind = null, columnCover = 0;
    const flush = () => {
      if (column < 0) return;
      ctx.fillStyle = colorOf[columnKind];
      ctx.fillRect(column, y, 1, boxHeight);
      ++boxesDrawn;
    };
    for (let i = first; i < r.count; ++i) {
      const a = r.t[2 * i], b = r.t[2 * i + 1];
      if (a > t1) break;
      const x0 = xOf(a), x1 = xOf(b);
      if (x1 - x0 >= 1) {
        ctx.fillStyle = colorOf[r.kind[i]];
        ctx.fillRect(x0, y, x1 - x0, boxHeight);
        ++boxesDrawn;
        continue;
      }
      const col = Math.floor(x0), cover = x1 - x0 + 1e-9;
      if (col !== column) {
        flush();
        column = col;
        columnKind = r.kind[i];
        columnCover = cover;
      } else if (cover > columnCover) {
        columnKind = r.kind[i];
        columnCover = cover;
      }
    }
    flush();
  }

  function endPoint(rank, index, atReturn) {
    const r = byRank.get(rank);
    const t = r.t[2 * index + (atReturn ? 1 : 0)];
    return [xOf(t), yOf(rank) + boxHeight / 2];
  }

  function visible(x) { return x >= -50 && x <= width + 50; }

  // Messages to receives posted for any source are drawn dashed in their
  // own colour: there, another send could have matched.
  function drawArrows() {
    arrowsDrawn = 0;
    wildcardArrowsDrawn = 0;
    const shown = [];
    for (const m of data.messages) {
      const [sx, sy] = endPoint(m[0], m[1], false);
      const [rx, ry] = endPoint(m[2], m[3], true);
      if ((sx < 0 && rx < 0) || (sx > width && rx > width)) continue;
      shown.push([sx, sy, rx, ry, m[4]]);
      if (shown.length > maxArrows) break;
    }
    if (shown.length > maxArrows) return;  // too dense to read: zoom in
    for (const [sx, sy, rx, ry, wildcard] of shown) {
      const color = wildcard ? "#d81b60" : "#c0392b";
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = wildcard ? 1.5 : 1;
      ctx.setLineDash(wildcard ? [5, 3] : []);
      wildcardArrowsDrawn += wildcard ? 1 : 0;
      ctx.beginPath();
      ctx.moveTo(sx, sy);
      ctx.lineTo(rx, ry);
      ctx.stroke();
      arrowHead(rx, ry, Math.atan2(ry - sy, rx - sx), 7);
      ++arrowsDrawn;
    }
    ctx.setLineDash([]);
  }

  function drawCollectives() {
    ctx.strokeStyle = "rgba(211, 84, 0, 0.8)";
    ctx.lineWidth = 1.5;
    ctx.setLineDash([4, 3]);
    let drawn = 0;
    for (const c of data.collectives) {
      const pts = [];
      for (let k = 1; k + 1 < c.length; k += 2) {
        const r = byRank.get(c[k]);
        const i = c[k + 1];
        const mid = (r.t[2 * i] + r.t[2 * i + 1]) / 2;
        pts.push([xOf(mid), yOf(c[k]) + boxHeight / 2]);
      }
      if (!pts.some(([x]) => visible(x))) continue;
      if (++drawn > maxArrows) break;
      pts.sort((a, b) => a[1] - b[1]);
      ctx.beginPath();
      ctx.moveTo(pts[0][0], pts[0][1]);
      for (const [x, y] of pts.slice(1)) ctx.lineTo(x, y);
      ctx.stroke();
    }
    ctx.setLineDash([]);
  }

  // The calls a call happened after: per other rank, the call its clock
  // names (entry k = v: the v-th clocked call of rank k, index v - 1).
  function clockOf(r, index) {
    const clock = new Array(data.world).fill(0);
    for (let i = 0; i <= index; ++i) {
      const d = r.clock[i];
      for (let j = 0; j + 1 < d.length; j += 2) clock[d[j]] = d[j + 1];
    }
    return clock;
  }
  function predecessors(rank, clock) {
    const out = [];
    clock.forEach((v, k) => {
      if (k !== rank && v > 0 && byRank.has(k) && v - 1 < byRank.get(k).count)
        out.push([k, v - 1]);
    });
    return out;
  }

  // Receives with alternative matches: a dashed outline.
  function drawFindings() {
    ctx.strokeStyle = "#e65100";
    ctx.lineWidth = 2;
    ctx.setLineDash([4, 2]);
    for (const [rank, i] of findings.alternatives) {
      const r = byRank.get(rank);
      if (!r || i >= r.count) continue;
      const x0 = xOf(r.t[2 * i]), x1 = Math.max(x0 + 3, xOf(r.t[2 * i + 1]));
      if (x1 < 0 || x0 > width) continue;
      ctx.strokeRect(x0 - 3, yOf(rank) - 3, x1 - x0 + 6, boxHeight + 6);
    }
    ctx.setLineDash([]);
  }

  // Deadlocks: each stuck rank's call never returned, so it is drawn from
  // the rank's last return to the end of the run, with an arrow to each rank
  // it waits for (to the end of a finished rank's lane).
  function lastReturn(rank) {
    const r = byRank.get(rank);
    return r && r.count ? r.endMax[r.count - 1] : 0;
  }
  // A filled head of `size` pixels at (x, y), pointing along `angle`.
  function arrowHead(x, y, angle, size) {
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x - size * Math.cos(angle - 0.4), y - size * Math.sin(angle - 0.4));
    ctx.lineTo(x - size * Math.cos(angle + 0.4), y - size * Math.sin(angle + 0.4));
    ctx.fill();
  }
  function drawArrow(xa, ya, xb, yb) {
    ctx.beginPath();
    ctx.moveTo(xa, ya);
    // Bent, so that arrows between the same lanes both ways stay apart.
    const mx = (xa + xb) / 2 + (ya === yb ? 0 : 24), my = (ya + yb) / 2 - (ya === yb ? 24 : 0);
    ctx.quadraticCurveTo(mx, my, xb, yb);
    ctx.stroke();
    arrowHead(xb, yb, Math.atan2(yb - my, xb - mx), 8);
  }
  function drawDeadlocks() {
    let arrows = 0;
    const end = Math.max(xOf(tEnd), 0);
    for (const d of deadlocks) {
      const at = new Map();
      for (const [rank] of d.ranks) {
        const x0 = Math.max(0, xOf(lastReturn(rank)) + 2), x1 = Math.max(x0 + 30, end);
        at.set(rank, [x0, x1]);
        ctx.fillStyle = "rgba(192, 57, 43, 0.25)";
        ctx.fillRect(x0, yOf(rank), x1 - x0, boxHeight);
        ctx.strokeStyle = "#c0392b";
        ctx.lineWidth = 2;
        ctx.strokeRect(x0, yOf(rank), x1 - x0, boxHeight);
      }
      ctx.strokeStyle = ctx.fillStyle = "#c0392b";
      ctx.lineWidth = 1.5;
      // Arrows leave and reach the boxes near their start, the call's name
      // follows.
      const anchor = ([x0, x1]) => x0 + Math.min(24, (x1 - x0) / 2);
      for (const [rank, , , waits] of d.ranks) {
        const xa = anchor(at.get(rank));
        for (const w of waits) {
          const target = at.get(w);
          const xb = target ? anchor(target) : xOf(lastReturn(w));
          drawArrow(xa, yOf(rank) + boxHeight / 2, xb, yOf(w) + (w === rank ? 0 : boxHeight / 2));
          ++arrows;
        }
      }
      ctx.fillStyle = "#7b241c";
      ctx.font = "11px sans-serif";
      for (const [rank, call] of d.ranks) {
        const [x0, x1] = at.get(rank);
        if (x1 - x0 > 80) ctx.fillText(call, x0 + 44, yOf(rank) + boxHeight - 4, x1 - x0 - 50);
      }
    }
    canvas.dataset.deadlockArrows = String(arrows);
  }

  function drawSelection() {
    if (!selected) return;
    const r = byRank.get(selected.rank);
    const mark = (rank, i, color) => {
      const rr = byRank.get(rank);
      const x0 = xOf(rr.t[2 * i]), x1 = Math.max(x0 + 3, xOf(rr.t[2 * i + 1]));
      ctx.strokeStyle = color;
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 - 2, yOf(rank) - 2, x1 - x0 + 4, boxHeight + 4);
    };
    for (const [k, i] of predecessors(selected.rank, clockOf(r, selected.index)))
      mark(k, i, "#16a085");
    mark(selected.rank, selected.index, "#000");
  }

  function fmt(ns) {
    if (!data.timed) return "—";
    return ns >= 1e6 ? (ns / 1e6).toFixed(3) + " ms" : (ns / 1e3).toFixed(3) + " µs";
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                  "\"": "&quot;"})[c]);
  }

  function select(rank, index) {
    const r = byRank.get(rank);
    if (!r || index < 0 || index >= r.count) return false;
    selected = {rank, index};
    const clock = clockOf(r, index);
    const name = data.names[r.name[index]];
    const site = r.site[index] >= 0 ? data.sites[r.site[index]] : "unknown";
    const group = r.group[index] >= 0 ? data.groups[r.group[index]] : null;
    const wildcardFrom = data.messages.filter((m) => m[2] === rank && m[3] === index && m[4])
                             .map((m) => m[0]);
    const after = predecessors(rank, clock).map(([k, i]) => {
      const n = data.names[byRank.get(k).name[i]];
      return `<li><a data-rank="${k}" data-index="${i}">rank ${k}, call ${i}: ${esc(n)}</a></li>`;
    }).join("");
    details.dataset.rank = String(rank);
    details.dataset.index = String(index);
    details.dataset.clock = JSON.stringify(clock);
    details.innerHTML =
        `<h2>${esc(name)}</h2><table>` +
        `<tr><td>rank</td><td>${rank}</td></tr>` +
        `<tr><td>call</td><td>${index} (in program order)</td></tr>` +
        `<tr><td>source</td><td class="site">${esc(site)}</td></tr>` +
        (group ? `<tr><td>group</td><td>${esc(group)}</td></tr>` : "") +
        (wildcardFrom.length ? `<tr><td>wildcard</td><td class="wildcard">a receive for any ` +
                               `source; took the message of rank ${wildcardFrom.join(", ")}` +
                               `</td></tr>` : "") +
        (alternativesOf.has(rank + ":" + index)
             ? `<tr><td>alternatives</td><td class="alternatives">could have matched rank ` +
               `${esc(alternativesOf.get(rank + ":" + index)[3].join(", "))} instead ` +
               `(--analysis matches)</td></tr>` : "") +
        `<tr><td>enter</td><td>${fmt(r.t[2 * index])}</td></tr>` +
        `<tr><td>return</td><td>${fmt(r.t[2 * index + 1])}</td></tr>` +
        `<tr><td>duration</td><td>${fmt(r.t[2 * index + 1] - r.t[2 * index])}</td></tr>` +
        `<tr><td>clock</td><td class="clock">[${clock.join(", ")}]</td></tr>` +
        `</table><h2>happened after</h2>` +
        (after ? `<ul class="after">${after}</ul>` : "<p>no call of another rank</p>");
    draw();
    return true;
  }
  function showFindings() {
    if (!findings.alternatives.length && !findings.races.length && !deadlocks.length) return;
    const rankLink = (rank) => {
      const r = byRank.get(rank);
      return r && r.count ? `<a data-rank="${+rank}" data-index="${r.count - 1}">rank ${+rank}</a>`
                          : `rank ${+rank}`;
    };
    const stuck = deadlocks.map((d) => `<li>` + d.ranks.map(([rank, call, line, waits]) =>
        `${rankLink(rank)} waits in ${esc(call)}${line ? " at " + esc(line) : ""}` +
        (waits.length ? ` for rank ${waits.map((w) => +w).join(", ")}` : "")).join("; ") +
        (d.finished.length ? `; finished: rank ${d.finished.map((w) => +w).join(", ")}` : "") +
        `</li>`).join("");
    const alt = findings.alternatives.map(([rank, i, matched, alts]) =>
        `<li><a data-rank="${+rank}" data-index="${+i}">rank ${+rank}, call ${+i}</a>: took ` +
        `rank ${esc(matched)}'s message, could have matched rank ${esc(alts.join(", "))}</li>`)
        .join("");
    const races = findings.races.map((t) => `<li>${esc(t)}</li>`).join("");
    details.innerHTML =
        (stuck ? `<h2>deadlocks</h2><ul class="deadlocks">${stuck}</ul>` : "") +
        (alt ? `<h2>receives with alternative matches</h2><ul class="findings">${alt}</ul>` : "") +
        (races ? `<h2>data races</h2><ul class="races">${races}</ul>` : "") +
        `<p class="hint">Click a call to see its clock.</p>`;
  }
  showFindings();
  details.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-rank]");
    if (a) select(+a.dataset.rank, +a.dataset.index);
  });

  // Which call is at canvas point (x, y): its lane, then the call whose box
  // holds x (or is within 3 pixels of it).
  function hit(x, y) {
    const rank = Math.floor((y - topPad + (laneHeight - boxHeight) / 2) / laneHeight);
    const r = byRank.get(rank);
    if (!r || y < yOf(rank) - 4 || y > yOf(rank) + boxHeight + 4) return null;
    const t = tOf(x), slack = 3 * (t1 - t0) / width;
    let best = null, bestDistance = Infinity;
    for (let i = firstEndingAfter(r, t - slack); i < r.count; ++i) {
      const a = r.t[2 * i], b = r.t[2 * i + 1];
      if (a > t + slack) break;
      const d = t < a ? a - t : t > b ? t - b : 0;
      if (d < bestDistance) { best = i; bestDistance = d; }
    }
    return best === null ? null : {rank, index: best};
  }

  // Zoom around x by factor f; pan by dx pixels.
  function zoom(x, f) {
    const t = tOf(x);
    const span = Math.max(10, Math.min(tEnd * 1.2, (t1 - t0) * f));
    t0 = t - (x / width) * span;
    t1 = t0 + span;
    draw();
  }
  function fit() {
    t0 = -tEnd * 0.01;
    t1 = tEnd * 1.01;
    draw();
  }

  let drag = null;
  canvas.addEventListener("mousedown", (e) => {
    drag = {x: e.offsetX, t0, t1, moved: false};
  });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dx = e.offsetX - drag.x;
    if (Math.abs(dx) > 2) {
      drag.moved = true;
      canvas.classList.add("dragging");
    }
    if (!drag.moved) return;
    const dt = dx / width * (drag.t1 - drag.t0);
    t0 = drag.t0 - dt;
    t1 = drag.t1 - dt;
    draw();
  });
  window.addEventListener("mouseup", (e) => {
    if (!drag) return;
    const wasDrag = drag.moved;
    drag = null;
    canvas.classList.remove("dragging");
    if (wasDrag || e.target !== canvas) return;
    const h = hit(e.offsetX, e.offsetY);
    if (h) select(h.rank, h.index);
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    zoom(e.offsetX, e.deltaY > 0 ? 1.25 : 0.8);
  }, {passive: false});
  document.getElementById("fit").onclick = fit;
  document.getElementById("zoom-in").onclick = () => zoom(width / 2, 0.5);
  document.getElementById("zoom-out").onclick = () => zoom(width / 2, 2);
  window.addEventListener("keydown", (e) => { if (e.key === "0") fit(); });
  window.addEventListener("resize", resize);

  // For tests and scripts: where a call's box is on the page, and what the
  // view drew.
  window.vcxView = {
    select,
    boxCenter(rank, index) {
      const r = byRank.get(rank);
      const rect = canvas.getBoundingClientRect();
      const x0 = xOf(r.t[2 * index]), x1 = xOf(r.t[2 * index + 1]);
      return {x: rect.left + (x0 + x1) / 2, y: rect.top + yOf(rank) + boxHeight / 2};
    },
    setRange(a, b) { t0 = a; t1 = b; draw(); },
    get arrows() { return arrowsDrawn; },
    get wildcardArrows() { return wildcardArrowsDrawn; },
    get boxes() { return boxesDrawn; },
    fit,
  };
  fit();
  resize();
})();
