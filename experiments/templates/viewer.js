// ttir trajectory viewer: filters, episodes by task and setting, step-by-step screenshots with the action
// drawn on them. Every text from the run goes in through textContent / attributes, never as markup.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("run-data").textContent);
  const IMAGES = DATA.images || null; // self-contained: key -> data URI; else the key is a relative path
  const SVG_NS = "http://www.w3.org/2000/svg";
  const TOUCH = { click: 1, long_press: 1, double_tap: 1, input_text: 1 };
  const FILTER_KEYS = ["task", "perturbation", "agent", "guard", "result", "termination", "fired", "category"];
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

  function imageSrc(ref) { return ref ? (IMAGES ? IMAGES[ref] || null : ref) : null; }

  function firedLabel(ep) {
    if (ep.fired === null || ep.fired === undefined) return "clean";
    return ep.fired ? "fired" : "not reached";
  }

  function valueOf(ep, key) {
    if (key === "result") return ep.status === "error" ? "error" : (ep.success ? (ep.recovered ? "success, guard acted" : "success") : "failure");
    if (key === "category") return ep.category || (ep.success ? "(solved)" : "other");
    if (key === "fired") return firedLabel(ep);
    return String(ep[key]);
  }

  function agentLabel(name) { return DATA.agents[name] || name; }

  // -- filters and list -----------------------------------------------------------------------
  function buildFilters() {
    const eps = DATA.episodes;
    const failed = eps.filter((e) => !e.success).length;
    const recovered = eps.filter((e) => e.recovered).length;
    document.getElementById("title").textContent = "ttir run " + DATA.run + " — " + eps.length + " episodes, " +
      failed + " failed, " + recovered + " solved with the guard acting";
    const summary = document.getElementById("summary");
    (DATA.summary || []).forEach((line) => summary.appendChild(el("li", { text: line })));
    if (DATA.report) {
      summary.appendChild(el("li", {}, ["every table and plot: ", el("a", { href: DATA.report, text: DATA.report })]));
    }
    document.querySelectorAll("#filters select").forEach((sel) => {
      const key = sel.dataset.key;
      const values = Array.from(new Set(eps.map((e) => valueOf(e, key))));
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
    let task = null;
    eps.forEach((ep) => {
      if (ep.task !== task) { // episodes come grouped by task, then setting
        task = ep.task;
        const mine = eps.filter((e) => e.task === task);
        const bad = mine.filter((e) => !e.success).length;
        list.appendChild(el("div", { cls: "group" }, [task, el("span", { cls: "sub", text:
          mine.length + " episodes" + (bad ? ", " + bad + " failed" : "") })]));
      }
      const mark = el("span", { cls: "mark " + (ep.success ? "ok" : "fail"), text: ep.success ? "✔" : "✘" });
      const detail = [agentLabel(ep.agent), "guard " + ep.guard, "ended " + ep.termination];
      if (ep.repeat || ep.seed) detail.push("s" + ep.seed + "r" + ep.repeat);
      if (ep.fired === false) detail.push("not reached");
      if (!ep.success && ep.category) detail.push(ep.category);
      if (!ep.success && ep.verified) detail.push("verified, not done");
      const head = [mark, ep.perturbation];
      if (ep.recovered) head.push(el("span", { cls: "tag", text: "recovered" }));
      const a = el("a", { cls: "ep", href: "#" + encodeURIComponent(ep.id), "data-id": ep.id },
        head.concat([el("span", { cls: "sub", text: detail.join(" · ") })]));
      if (state.episode && state.episode.id === ep.id) a.classList.add("active");
      list.appendChild(a);
      a.addEventListener("click", (ev) => { ev.preventDefault(); openEpisode(ep.id, ep.focus); });
    });
    const active = list.querySelector("a.active");
    if (active) active.scrollIntoView({ block: "nearest" });
  }

  // -- one episode ----------------------------------------------------------------------------
  function openEpisode(id, step) {
    const ep = DATA.episodes.find((e) => e.id === id);
    if (!ep) return false;
    state.episode = ep;
    const root = document.getElementById("episode");
    root.textContent = "";
    root.appendChild(document.getElementById("episode-template").content.cloneNode(true));
    const verdict = ep.success ? (ep.recovered ? "✔ solved, the guard acted " : "✔ solved ") :
      (ep.verified ? "✘ verified, never declared done " : "✘ failed ");
    root.querySelector(".ep-title").appendChild(el("span", { cls: ep.success ? "ok" : "fail", text: verdict }));
    root.querySelector(".ep-title").appendChild(document.createTextNode(ep.id));
    root.querySelector(".ep-goal").textContent = ep.goal || "";
    const fired = ep.fired === null || ep.fired === undefined ? null :
      (ep.fired ? "perturbation fired" + (ep.fired_step === null || ep.fired_step === undefined ? "" : " at step " + ep.fired_step)
        : "perturbation never fired (not reached)");
    root.querySelector(".ep-meta").textContent = [
      "agent " + agentLabel(ep.agent), "guard " + ep.guard, "perturbation " + ep.perturbation +
      " (" + ep.component + (ep.layer ? "/" + ep.layer : "") + ")", fired, ep.steps_used + " steps of a budget of " + ep.budget,
      "ended: " + ep.termination, ep.category ? "error category " + ep.category : null,
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
    showStep(step || 0);
    return true;
  }

  // values in words: {density_scale: 0.76} is "density scale 0.76", not a JSON dict
  function words(v) {
    if (v === null || v === undefined) return "";
    if (Array.isArray(v)) return v.map(words).join(", ");
    if (typeof v === "object") {
      return Object.entries(v).filter(([, x]) => x !== null && x !== "").map(([k, x]) => k.replace(/_/g, " ") + " " + words(x)).join(", ");
    }
    return String(v);
  }

  function eventItem(e) {
    const details = Object.entries(e.details || {}).filter(([, v]) => v !== null && v !== "")
      .map(([k, v]) => k.replace(/_/g, " ") + ": " + words(v)).join("; ");
    return el("li", {}, [el("span", { cls: "kind", text: e.perturbation + " " + String(e.event).replace(/_/g, " ") }),
      " at step " + e.step + (details ? " — " + details : "")]);
  }

  const OUTCOMES = { resolved: "resolved", budget_spent: "its step budget ran out", exhausted: "nothing left to try",
    episode_end: "the episode ended first", error: "it failed", open: "still open" };

  // one sentence per guard event (the step log's keys are for programs)
  function guardText(g) {
    const s = "recovery session " + (g.session === undefined ? "" : g.session + " ");
    switch (g.event) {
      case "session_opened": return [s + "opened", " by " + g.diagnoser + " (" + g.verdict + "): trying " +
        String(g.recovery || g.strategy || "").replace(/_/g, " ") + (g.evidence && g.evidence.length ? " — " + g.evidence.join("; ") : "")];
      case "recovery_step": return [s + "acts", ": " + (g.summary || shortLabel(g.action) || "(an action)")];
      case "session_closed": return [s + "closed", ": " + (OUTCOMES[g.outcome] || g.outcome) +
        (g.steps === undefined ? "" : " after " + g.steps + " recovery step" + (g.steps === 1 ? "" : "s"))];
      case "recovery_unavailable": return ["no recovery", ": " + g.diagnoser + " found a problem, but " +
        String(g.recovery || g.strategy || "its recovery").replace(/_/g, " ") + " had nothing to try"];
      case "claim_blocked": return ["“done” blocked", ": the task does not look done" +
        (g.evidence && g.evidence.length ? " — " + [].concat(g.evidence).join("; ") : "")];
      case "diagnoser_error": return [g.diagnoser + " failed", ": " + g.error + " (the guard went on without it)"];
      case "guard_error": return ["guard error", ": " + g.error + " (the agent's own action was kept)"];
      default: return [String(g.event).replace(/_/g, " "), ": " + words(Object.fromEntries(
        Object.entries(g).filter(([k]) => k !== "event" && k !== "step")))];
    }
  }

  function guardItem(g) {
    if (g.event === "finding") {
      return el("li", { cls: "problem" }, [el("span", { cls: "kind", text: (g.claim ? "claim check: " : "") + g.diagnoser }),
        " → " + g.verdict + " (" + g.tier + " tier, confidence " + g.confidence + ")" + (g.evidence && g.evidence.length ? ": " + g.evidence.join("; ") : "")]);
    }
    const [head, rest] = guardText(g);
    return el("li", { cls: "session" }, [el("span", { cls: "kind", text: head }), rest]);
  }

  function renderSessions(body, sessions) {
    if (!sessions || !sessions.length) { body.appendChild(el("p", { cls: "muted", text: "no recovery session" })); return; }
    const head = el("tr", {}, ["#", "diagnoser", "recovery", "opened", "closed", "outcome", "actions", "trigger"].map((h) => el("th", { text: h })));
    const rows = sessions.map((s) => el("tr", {}, [s.id, s.diagnoser, s.recovery || s.strategy, s.opened_at, s.closed_at, s.outcome,
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

  function shortLabel(a) {
    if (!a || !a.action_type) return "";
    if (a.action_type === "input_text") return "type " + JSON.stringify(a.text || "");
    if (a.action_type === "open_app") return "open_app " + (a.app_name || "");
    if (a.action_type === "status") return "status: " + (a.goal_status || "");
    if (a.action_type === "scroll") return "scroll " + (a.direction || "");
    if (TOUCH[a.action_type] || a.action_type === "swipe") return a.action_type;
    return describe(a);
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
    // counted as `ttir demo` and episodes.jsonl count: a step is an action on the phone, numbered from 0;
    // the agent's closing declaration ends the episode and is not one
    const closing = !isFinal && st.action && st.action.action_type === "status";
    root.querySelector(".step-label").textContent = isFinal ? "final screen" :
      (closing ? "end: the agent declares the task " + (st.action.goal_status || "done") + " after " + ep.steps_used + " steps"
        : "step " + i + " (" + ep.steps_used + " steps in all)");
    const img = root.querySelector(".shot-img");
    const layer = root.querySelector(".shot-svg");
    const label = root.querySelector(".shot-label");
    layer.textContent = "";
    label.textContent = "";
    const src = imageSrc(isFinal ? ep.final : st.img);
    const caption = root.querySelector(".shot-caption");
    caption.textContent = isFinal ? "final screen: " + ((ep.final_screen || {}).foreground || "")
      : (st.fg || "") + (st.orientation ? " · " + st.orientation : "");
    if (!isFinal) actionLabel(label, st);
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

  // The action's name goes above the screenshot, not on it: it never covers the screen's own text.
  function actionLabel(label, st) {
    const colour = st.source === "recovery" ? "#9a6700" : "#cf222e";
    label.appendChild(el("span", { style: "color:" + colour, text: (st.source === "recovery" ? "guard: " : "agent: ") +
      (shortLabel(st.action) || "(no action)") }));
    executedAt(st).forEach((e) => label.appendChild(el("span", { cls: "executed", text: " · dashed: where it really landed (" + e.event + ")" })));
  }

  function executedAt(st) {
    return (st.events || []).filter((e) => { const alt = (e.details || {}).altered; return alt && alt.x !== undefined && alt.x !== null && e.step === st.i; });
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

  // -- drawing the action on the screenshot (marks only; the words are in the label above) ---------------
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
    } else if (a.action_type === "swipe" && a.x !== undefined && a.x !== null) {
      arrow(layer, P(a.x, a.y), P(a.x2, a.y2), colour, r);
    } else if (a.action_type === "scroll") {
      const [cx, cy] = a.x !== undefined && a.x !== null ? P(a.x, a.y) : [w / 2, h / 2];
      const d = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] }[a.direction] || [0, 1];
      const len = Math.min(w, h) / 4;
      arrow(layer, [cx, cy], [cx + d[0] * len, cy + d[1] * len], colour, r);
    }
    // where a perturbation really sent the action (offset / remapped / replaced)
    executedAt(st).forEach((e) => {
      const [x, y] = P(e.details.altered.x, e.details.altered.y);
      layer.appendChild(svg("circle", { cx: x, cy: y, r: r * 0.8, fill: "none", stroke: "#0969da", "stroke-width": 2, "stroke-dasharray": "4 3" }));
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

  document.addEventListener("keydown", (ev) => {
    if (ev.target && (ev.target.tagName === "SELECT" || ev.target.tagName === "INPUT")) return;
    if (ev.key === "ArrowRight") showStep(state.step + 1);
    if (ev.key === "ArrowLeft") showStep(state.step - 1);
  });

  buildFilters();
  renderList();
  // deep link: viewer.html#<episode id> or #<episode id>@<step>; else the first failure, else the first recovery
  const wanted = decodeURIComponent((location.hash || "").slice(1)).split("@");
  const eps = visible();
  const first = eps.find((e) => !e.success) || eps.find((e) => e.recovered) || eps[0];
  if (!(wanted[0] && openEpisode(wanted[0], Number(wanted[1] || 0))) && first) openEpisode(first.id, first.focus);
})();
