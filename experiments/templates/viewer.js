// ttir trajectory viewer: filters, episode list, step-by-step screenshots with the action drawn on them.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("run-data").textContent);
  const SVG_NS = "http://www.w3.org/2000/svg";
  const TOUCH = { click: 1, long_press: 1, double_tap: 1, input_text: 1 };
  const FILTER_KEYS = ["task", "perturbation", "agent", "guard", "result", "category"];
  const state = { filters: {}, episode: null, step: 0 };

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (v === undefined || v === null) return;
      if (k === "text") node.textContent = v; else if (k === "cls") node.className = v; else node.setAttribute(k, v);
    });
    (children || []).forEach((c) => node.appendChild(typeof c === "string" ? document.createTextNode(c) : c));
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    return node;
  }

  function valueOf(ep, key) {
    if (key === "result") return ep.status === "error" ? "error" : (ep.success ? "success" : "failure");
    if (key === "category") return ep.category || (ep.success ? "(solved)" : "other");
    return String(ep[key]);
  }

  function agentLabel(name) { return DATA.agents[name] || name; }

  // -- filters and list -----------------------------------------------------------------------
  function buildFilters() {
    document.getElementById("title").textContent = "ttir run " + DATA.run + " — " + DATA.episodes.length + " episodes";
    document.querySelectorAll("#filters select").forEach((sel) => {
      const key = sel.dataset.key;
      const values = Array.from(new Set(DATA.episodes.map((e) => valueOf(e, key))));
      sel.appendChild(el("option", { value: "", text: "all" }));
      values.forEach((v) => sel.appendChild(el("option", { value: v, text: key === "agent" ? agentLabel(v) : v })));
      sel.addEventListener("change", () => { state.filters[key] = sel.value; renderList(); });
    });
  }

  function visible() {
    return DATA.episodes.filter((e) => FILTER_KEYS.every((k) => !state.filters[k] || valueOf(e, k) === state.filters[k]));
  }

  function renderList() {
    const list = document.getElementById("list");
    list.textContent = "";
    const eps = visible();
    document.getElementById("count").textContent = eps.length + " shown";
    eps.forEach((ep) => {
      const mark = el("span", { cls: "mark " + (ep.success ? "ok" : "fail"), text: ep.success ? "✔" : "✘" });
      const sub = el("span", { cls: "sub", text: ep.agent + " · guard " + ep.guard + " · s" + ep.seed + "r" + ep.repeat +
        (ep.success ? "" : " · " + (ep.category || ep.termination || "")) });
      const a = el("a", { href: "#" + encodeURIComponent(ep.id), "data-id": ep.id }, [mark, ep.task + " · " + ep.perturbation, sub]);
      if (state.episode && state.episode.id === ep.id) a.classList.add("active");
      list.appendChild(a);
      a.addEventListener("click", (ev) => { ev.preventDefault(); openEpisode(ep.id); });
    });
    const active = list.querySelector("a.active");
    if (active) active.scrollIntoView({ block: "nearest" });
  }

  // -- one episode ----------------------------------------------------------------------------
  function openEpisode(id, step) {
    const ep = DATA.episodes.find((e) => e.id === id);
    if (!ep) return;
    state.episode = ep;
    state.step = step || 0;
    const root = document.getElementById("episode");
    root.textContent = "";
    root.appendChild(document.getElementById("episode-template").content.cloneNode(true));
    root.querySelector(".ep-title").appendChild(el("span", { cls: ep.success ? "ok" : "fail", text: ep.success ? "✔ solved " : "✘ failed " }));
    root.querySelector(".ep-title").appendChild(document.createTextNode(ep.id));
    root.querySelector(".ep-goal").textContent = ep.goal || "";
    root.querySelector(".ep-meta").textContent = [
      "agent " + agentLabel(ep.agent), "guard " + ep.guard, "perturbation " + ep.perturbation +
      " (" + ep.component + (ep.layer ? "/" + ep.layer : "") + ")", "steps " + ep.steps_used + " / budget " + ep.budget,
      "termination " + ep.termination, ep.category ? "error category " + ep.category : null,
      ep.status === "error" ? "episode raised: " + (ep.error || "").trim().split("\n").pop() : null,
    ].filter(Boolean).join(" · ");
    const slider = root.querySelector(".slider");
    slider.max = String(ep.steps.length); // the last position is the final screen
    slider.addEventListener("input", () => showStep(Number(slider.value)));
    root.querySelector(".prev").addEventListener("click", () => showStep(state.step - 1));
    root.querySelector(".next").addEventListener("click", () => showStep(state.step + 1));
    renderSessions(root.querySelector(".sessions-body"), ep.sessions);
    const all = root.querySelector(".events-all");
    ep.reset_events.concat(...ep.steps.map((s) => s.events)).forEach((e) => all.appendChild(eventItem(e)));
    if (!all.children.length) all.appendChild(el("li", { cls: "muted", text: "no perturbation events" }));
    renderList();
    showStep(state.step);
  }

  function eventItem(e) {
    const details = Object.entries(e.details || {}).filter(([, v]) => v !== null && v !== "")
      .map(([k, v]) => k + "=" + (typeof v === "object" ? JSON.stringify(v) : v)).join(", ");
    return el("li", {}, [el("span", { cls: "kind", text: e.event }), " · step " + e.step + " · " + e.perturbation +
      (details ? " — " + details : "")]);
  }

  function guardItem(g) {
    if (g.type === "finding") {
      return el("li", { cls: "problem" }, [el("span", { cls: "kind", text: (g.claim ? "claim check: " : "") + g.diagnoser }),
        " → " + g.verdict + " (" + g.tier + ", conf " + g.confidence + ")" + (g.evidence && g.evidence.length ? ": " + g.evidence.join("; ") : "")]);
    }
    const rest = Object.entries(g).filter(([k]) => k !== "type" && k !== "step")
      .map(([k, v]) => k + "=" + (typeof v === "object" ? JSON.stringify(v) : v)).join(", ");
    return el("li", { cls: "session" }, [el("span", { cls: "kind", text: g.type }), rest ? " — " + rest : ""]);
  }

  function renderSessions(body, sessions) {
    if (!sessions || !sessions.length) { body.appendChild(el("p", { cls: "muted", text: "no recovery session" })); return; }
    const head = el("tr", {}, ["#", "diagnoser", "strategy", "opened", "closed", "outcome", "actions", "trigger"].map((h) => el("th", { text: h })));
    const rows = sessions.map((s) => el("tr", {}, [s.id, s.diagnoser, s.strategy, s.opened_at, s.closed_at, s.outcome,
      (s.actions || []).map((a) => describe(a.action || a)).join(" → "),
      ((s.trigger || {}).evidence || []).join("; ")].map((v) => el("td", { text: v === null || v === undefined ? "" : String(v) }))));
    body.appendChild(el("table", {}, [head].concat(rows)));
  }

  function describe(a) {
    if (!a || !a.action_type) return "";
    const parts = Object.entries(a).filter(([k, v]) => k !== "action_type" && v !== null && v !== undefined)
      .map(([k, v]) => k + "=" + JSON.stringify(v));
    return a.action_type + "(" + parts.join(", ") + ")";
  }

  function showStep(i) {
    const ep = state.episode;
    if (!ep) return;
    const n = ep.steps.length;
    i = Math.max(0, Math.min(n, i));
    state.step = i;
    history.replaceState(null, "", "#" + encodeURIComponent(ep.id) + (i ? "@" + i : ""));
    const root = document.getElementById("episode");
    root.querySelector(".slider").value = String(i);
    const isFinal = i === n;
    const st = isFinal ? null : ep.steps[i];
    root.querySelector(".step-label").textContent = isFinal ? "final screen" : "step " + i + " of " + n;
    const img = root.querySelector(".shot-img");
    const layer = root.querySelector(".shot-svg");
    layer.textContent = "";
    const src = isFinal ? ep.final : st.img;
    const caption = root.querySelector(".shot-caption");
    caption.textContent = isFinal ? "final screen: " + ((ep.final_screen || {}).foreground || "")
      : (st.fg || "") + (st.orientation ? " · " + st.orientation : "");
    if (src) {
      img.style.display = "";
      img.onload = () => { if (!isFinal) drawAction(layer, img, st); };
      img.src = src;
      if (img.complete && img.naturalWidth && !isFinal) drawAction(layer, img, st);
    } else {
      img.removeAttribute("src");
      img.style.display = "none";
      caption.textContent += " (no screenshot kept for this step)";
    }
    renderStepInfo(root, st);
  }

  function renderStepInfo(root, st) {
    const box = root.querySelector(".action");
    const events = root.querySelector(".events");
    const guard = root.querySelector(".guard");
    box.textContent = ""; events.textContent = ""; guard.textContent = "";
    if (!st) { box.appendChild(el("p", { cls: "muted", text: "after the last step" })); return; }
    box.appendChild(el("p", {}, [el("code", { text: describe(st.action) || "(no action)" }),
      el("span", { cls: "src " + st.source, text: st.source === "recovery" ? "guard recovery" : "agent" })]));
    if (st.summary) box.appendChild(el("p", { cls: "summary", text: "summary: " + st.summary }));
    if (st.thought) box.appendChild(el("p", { cls: "thought muted", text: "thought: " + st.thought }));
    if (st.error) box.appendChild(el("p", { cls: "err", text: "action error: " + st.error }));
    st.events.forEach((e) => events.appendChild(eventItem(e)));
    if (!st.events.length) events.appendChild(el("li", { cls: "muted", text: "none after this step" }));
    st.guard.forEach((g) => guard.appendChild(guardItem(g)));
    if (!st.guard.length) guard.appendChild(el("li", { cls: "muted", text: "no problem found" }));
  }

  // -- drawing the action on the screenshot ------------------------------------------------------
  function drawAction(layer, img, st) {
    layer.textContent = "";
    const a = st.action || {};
    const w = img.naturalWidth, h = img.naturalHeight;
    const screen = st.size || [w, h];
    const scale = w / screen[0]; // screen pixels -> stored screenshot pixels (downscaled on save)
    layer.setAttribute("viewBox", "0 0 " + w + " " + h);
    const r = Math.max(6, w / 40);
    const colour = st.source === "recovery" ? "#d29922" : "#e5534b";
    const P = (x, y) => [x * scale, y * scale];
    if (TOUCH[a.action_type] && a.x !== undefined && a.x !== null) {
      const [x, y] = P(a.x, a.y);
      layer.appendChild(svg("circle", { cx: x, cy: y, r: r, fill: colour, "fill-opacity": 0.35, stroke: colour, "stroke-width": 2 }));
      if (a.action_type === "long_press" || a.action_type === "double_tap") {
        layer.appendChild(svg("circle", { cx: x, cy: y, r: r * 1.6, fill: "none", stroke: colour, "stroke-width": 2 }));
      }
      label(layer, x + r + 2, y, a.action_type === "input_text" ? "type " + JSON.stringify(a.text || "") : a.action_type, colour, w);
    } else if (a.action_type === "swipe" && a.x !== undefined && a.x !== null) {
      arrow(layer, P(a.x, a.y), P(a.x2, a.y2), colour, r);
      label(layer, a.x * scale + r, a.y * scale, "swipe", colour, w);
    } else if (a.action_type === "scroll") {
      const [cx, cy] = a.x !== undefined && a.x !== null ? P(a.x, a.y) : [w / 2, h / 2];
      const d = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] }[a.direction] || [0, 1];
      const len = Math.min(w, h) / 4;
      arrow(layer, [cx, cy], [cx + d[0] * len, cy + d[1] * len], colour, r);
      label(layer, cx + r, cy, "scroll " + (a.direction || ""), colour, w);
    } else if (a.action_type) {
      const text = a.action_type === "open_app" ? "open_app " + a.app_name :
        a.action_type === "status" ? "status: " + a.goal_status : describe(a);
      label(layer, 8, h * 0.08, text, colour, w, true);
    }
    // where a perturbation really sent the action (offset / remapped / replaced)
    (st.events || []).forEach((e) => {
      const alt = (e.details || {}).altered;
      if (alt && alt.x !== undefined && alt.x !== null && e.step === st.i) {
        const [x, y] = P(alt.x, alt.y);
        layer.appendChild(svg("circle", { cx: x, cy: y, r: r * 0.8, fill: "none", stroke: "#0969da", "stroke-width": 2, "stroke-dasharray": "4 3" }));
        label(layer, x + r, y + r * 1.5, "executed (" + e.event + ")", "#0969da", w);
      }
    });
  }

  function arrow(layer, from, to, colour, r) {
    layer.appendChild(svg("line", { x1: from[0], y1: from[1], x2: to[0], y2: to[1], stroke: colour, "stroke-width": 3 }));
    const ang = Math.atan2(to[1] - from[1], to[0] - from[0]);
    const s = r * 1.2;
    const p1 = [to[0] - s * Math.cos(ang - 0.5), to[1] - s * Math.sin(ang - 0.5)];
    const p2 = [to[0] - s * Math.cos(ang + 0.5), to[1] - s * Math.sin(ang + 0.5)];
    layer.appendChild(svg("polygon", { points: [to, p1, p2].map((p) => p.join(",")).join(" "), fill: colour }));
    layer.appendChild(svg("circle", { cx: from[0], cy: from[1], r: r / 2, fill: colour }));
  }

  function label(layer, x, y, text, colour, w, banner) {
    const size = Math.max(9, w / 28);
    const right = !banner && x > w * 0.6; // near the right edge: write to the left of the mark
    const t = svg("text", { x: right ? x - size * 2.2 : x, y: y, fill: colour, "font-size": size, "font-weight": "bold",
      "text-anchor": right ? "end" : "start", "paint-order": "stroke", stroke: "white", "stroke-width": size / 4 });
    t.textContent = banner ? text : (text.length > 40 ? text.slice(0, 39) + "…" : text);
    layer.appendChild(t);
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.target && ev.target.tagName === "SELECT") return;
    if (ev.key === "ArrowRight") showStep(state.step + 1);
    if (ev.key === "ArrowLeft") showStep(state.step - 1);
  });

  buildFilters();
  renderList();
  // deep link: viewer.html#<episode id> or #<episode id>@<step>
  const wanted = decodeURIComponent((location.hash || "").slice(1)).split("@");
  const first = visible()[0];
  if (wanted[0]) openEpisode(wanted[0], Number(wanted[1] || 0)); else if (first) openEpisode(first.id);
})();
