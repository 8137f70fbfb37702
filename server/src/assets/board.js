"use strict";
// The board (every task of the queue and of the local stores, as cards in columns, live
// over Server-Sent Events) and a task's page (/task/ID, or /share/TOKEN without the
// server's token). Uses `$`, `headers`, `el`, `summary` and `readEvents` of app.js; its own
// top-level names must not be app.js's (one global scope).

const COLUMNS = ["queued", "running", "held", "delivered", "failed"];
// `history` ("id column" per change seen live) and `latencies` (ms from an event's storing
// to its line on the task page) are read by the e2e tests and the bench; `pending` holds the
// cards received since the last frame (drawn together in the next one).
const board = { cards: new Map(), nodes: new Map(), stream: null, statsTimer: null, history: [], latencies: [], pending: new Map(), frame: 0 };
// The time since the page's navigation started, read by the bench (`boardTimes`).
const boardScriptAt = performance.now();
const share = location.pathname.startsWith("/share/") ? decodeURIComponent(location.pathname.slice(7)) : null;
const taskPath = location.pathname.startsWith("/task/") ? decodeURIComponent(location.pathname.slice(6)) : null;

function money(v) { return v == null ? "-" : "$" + Number(v).toFixed(v < 1 ? 4 : 2); }
function duration(ms) {
  if (ms == null) return "-";
  if (ms < 1000) return Math.round(ms) + "ms";
  const s = Math.round(ms / 1000);
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0");
  return Math.floor(s / 3600) + "h" + String(Math.floor(s / 60) % 60).padStart(2, "0");
}
function when(ms) { return ms ? new Date(ms).toLocaleString() : "-"; }
function filters() {
  const q = new URLSearchParams();
  for (const f of ["repo", "provider", "worker"]) {
    const v = $("f-" + f).value;
    if (v) q.set(f, v);
  }
  return q;
}
async function api(path, options) {
  const res = await fetch(path, Object.assign({ headers: headers(options && options.body) }, options || {}));
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  return { status: res.status, ok: res.ok, body };
}

// ---- views -----------------------------------------------------------------------------

// The view `/` opens without a hash: the board on a server with a queue (the team's page),
// else the chat (the server says which in `<body data-home>`). The other stays a tab away.
const home = document.body.dataset.home === "board" ? "board" : "chat";
function currentView() {
  if (share || taskPath) return "task";
  if (location.hash === "#board") return "board";
  if (location.hash === "#chat") return "chat";
  return home;
}

function showView() {
  const view = currentView();
  document.querySelector("main").hidden = view !== "chat";
  document.querySelector("main").style.display = view === "chat" ? "" : "none";
  document.querySelector("footer").style.display = view === "chat" ? "" : "none";
  $("board-view").hidden = view !== "board";
  $("task-view").hidden = view !== "task";
  $("nav-chat").toggleAttribute("aria-current", false);
  $("nav-board").toggleAttribute("aria-current", false);
  if (view !== "task") $("nav-" + view).setAttribute("aria-current", "page");
  if (share) for (const id of ["views", "back"]) $(id).hidden = true;
  if (view === "chat") openChat();
  if (view === "board") openBoard();
  else if (board.stream) { board.stream.abort(); board.stream = null; }
  if (view === "task") openTask(taskPath);
}

// ---- the board -------------------------------------------------------------------------

// A card's markup. The board draws its cards as one string per column (one `innerHTML`):
// a thousand cards built node by node cost the page several times more.
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
function esc(v) { return String(v).replace(/[&<>"']/g, (ch) => ESCAPES[ch]); }
function span(cls, text) { return (cls ? '<span class="' + cls + '">' : "<span>") + esc(text) + "</span>"; }

function cardInner(c) {
  const repo = (c.repo || "").replace(/\/+$/, "").split("/").pop();
  let meta = span("repo", repo) + span("provider", c.provider || "default");
  if (c.worker) meta += span("worker", "@" + c.worker);
  if (c.source === "local") meta += span("", "local");
  let meta2 = "";
  if (c.stage) meta2 += span("stage", c.stage);
  if (c.outcome) meta2 += span("outcome", c.outcome);
  meta2 += span("attempts", "try " + c.attempts + "/" + c.max_attempts);
  // A running card counts its elapsed time on by itself (see the timer below).
  const since = c.column === "running" && c.started_at_ms ? ' data-since="' + Number(c.started_at_ms) + '"' : "";
  meta2 += '<span class="elapsed"' + since + ">" + esc(duration(c.elapsed_ms)) + "</span>";
  meta2 += span("cost", money(c.cost_usd));
  if (c.risk_score != null && c.column === "held") meta2 += span("risk", "risk " + c.risk_score);
  return '<div class="title">' + esc(c.title || "(no prompt)") + '</div><div class="meta">' + meta + '</div><div class="meta">' + meta2 + "</div>";
}

function cardHtml(c) {
  return '<a class="card" href="/task/' + esc(encodeURIComponent(c.task_id)) + '" data-task="' + esc(c.task_id)
    + '" data-column="' + esc(c.column) + '" title="' + esc(c.task_id) + '">' + cardInner(c) + "</a>";
}

function cardNode(c) {
  const t = document.createElement("template");
  t.innerHTML = cardHtml(c);
  return t.content.firstElementChild;
}

// In place, so a card keeps the keyboard focus while it changes.
function fillCard(a, c) {
  a.dataset.column = c.column;
  a.innerHTML = cardInner(c);
}

function columnOf(name) { return document.querySelector(`.column[data-column="${name}"] .cards`); }

function counts() {
  for (const name of COLUMNS) {
    const n = columnOf(name).childElementCount;
    document.querySelector(`.column[data-column="${name}"] .count`).textContent = "(" + n + ")";
  }
}

function same(a, b) {
  const plain = (c) => JSON.stringify(Object.assign({}, c, { elapsed_ms: null, received_at: null }));
  return plain(a) === plain(b);
}

// A card new or changed: placed in its column by submission time (newest first). Whether
// it entered a column.
function upsert(c) {
  board.cards.set(c.task_id, c);
  let node = board.nodes.get(c.task_id);
  if (!node) {
    node = cardNode(c);
    board.nodes.set(c.task_id, node);
  } else {
    const moved = node.dataset.column !== c.column;
    fillCard(node, c);
    if (!moved) return false;
  }
  const column = columnOf(c.column);
  const after = [...column.children].find((n) => (board.cards.get(n.dataset.task) || {}).submitted_at_ms < c.submitted_at_ms);
  column.insertBefore(node, after || null);
  return true;
}

// Cards from the stream are drawn once per frame, however many came: a burst of changes
// (many workers finishing at once) costs one layout, not one per card.
function queueCard(c) {
  board.pending.set(c.task_id, c);
  if (!board.frame) board.frame = requestAnimationFrame(drawPending);
}

function drawPending() {
  board.frame = 0;
  const cards = [...board.pending.values()];
  board.pending.clear();
  let moved = false;
  for (const c of cards) moved = upsert(c) || moved;
  if (moved) counts();
  if (cards.length) refreshStatsSoon();
}

function fillSelect(select, values) {
  const keep = select.value;
  select.textContent = "";
  select.appendChild(el("option", "", "all")).value = "";
  for (const v of values) select.appendChild(el("option", "", v)).value = v;
  select.value = values.includes(keep) ? keep : "";
}

async function loadBoard() {
  const started = performance.now();
  // The stream that follows starts from this very board (`snapshot`), not from nothing.
  if (board.stream) { board.stream.abort(); board.stream = null; }
  const query = filters();
  query.set("snapshot", "1");
  const { ok, status, body } = await api("/v1/board?" + query);
  const received = performance.now();
  if (!ok) { $("board-note").textContent = "board: " + status + " " + ((body && body.message) || ""); return; }
  fillSelect($("f-repo"), body.facets.repos);
  fillSelect($("f-provider"), body.facets.providers);
  fillSelect($("f-worker"), body.facets.workers);
  board.cards.clear();
  board.nodes.clear();
  board.pending.clear();
  const parts = Object.fromEntries(COLUMNS.map((c) => [c, []]));
  for (const c of body.cards) {
    board.cards.set(c.task_id, c);
    (parts[c.column] || parts.failed).push(cardHtml(c));
  }
  for (const name of COLUMNS) {
    const column = columnOf(name);
    column.innerHTML = parts[name].join("");
    for (const node of column.children) board.nodes.set(node.dataset.task, node);
  }
  counts();
  charts(body.stats);
  const repos = $("s-repos");
  repos.textContent = "";
  for (const r of body.facets.repos) repos.appendChild(el("option")).value = r;
  $("board-note").textContent = (body.problems || []).join("; ") + (body.queue ? "" : " (no queue: local tasks only)");
  // Read by the e2e bench: the time from the request to cards on the page, and where the
  // time since the navigation went (the script started, the request sent, the answer's
  // first and last byte, the answer parsed, the cards drawn).
  const drawn = performance.now();
  const timing = performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/board?")).pop() || {};
  document.body.dataset.boardMs = String(Math.round(drawn - started));
  document.body.dataset.boardTimes = JSON.stringify({
    script: boardScriptAt, request: started, first_byte: timing.responseStart, last_byte: timing.responseEnd, response: received, drawn,
  }, (_, v) => typeof v === "number" ? Math.round(v) : v);
  document.body.dataset.boardCards = String(body.cards.length);
  followBoard(body.queue, body.snapshot);
}

function refreshStatsSoon() {
  clearTimeout(board.statsTimer);
  board.statsTimer = setTimeout(async () => {
    const { ok, body } = await api("/v1/board?limit=1000&" + filters());
    if (ok) charts(body.stats);
  }, 1500);
}

// The board live: each changed card comes as one `card` message. `snapshot` (from the
// board's answer) has the server start from the cards the page holds; a reconnection
// starts from nothing, and the cards the page holds already are skipped below. The
// agents' permission requests come on the same stream (permissions.js), on a server
// without a queue too (its stream then carries them alone).
async function followBoard(hasQueue, snapshot) {
  if (board.stream) board.stream.abort();
  const live = (text) => { $("board-live").textContent = hasQueue ? text : ""; };
  const controller = new AbortController();
  board.stream = controller;
  while (!controller.signal.aborted) {
    try {
      const query = filters();
      if (snapshot) query.set("from", snapshot);
      snapshot = null;
      const res = await fetch("/v1/board/events?" + query, { headers: headers(false), signal: controller.signal });
      if (!res.ok) { live("not live: " + res.status); return; }
      live("● live");
      await readEvents(res, ({ event, data }) => {
        if (data && permissionMessage("board", event, data)) return controller.signal.aborted;
        if (event === "card" && data) {
          const c = JSON.parse(data);
          // After a reconnection, the stream's first messages are the cards the page has.
          const known = board.pending.get(c.task_id) || board.cards.get(c.task_id);
          if (known && same(known, c)) return controller.signal.aborted;
          c.received_at = performance.now();
          queueCard(c);
          board.history.push(c.task_id + " " + c.column);
          document.body.dataset.lastCard = c.task_id + " " + c.column + " " + (c.stage || "");
        }
        return controller.signal.aborted;
      });
    } catch (e) {
      if (controller.signal.aborted) return;
    }
    live("reconnecting…");
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// Running cards count their elapsed time on by themselves (no request).
setInterval(() => {
  for (const span of document.querySelectorAll(".elapsed[data-since]")) {
    span.textContent = duration(Date.now() - Number(span.dataset.since));
  }
}, 1000);

// ---- charts (inline SVG, the numbers in each bar's title on hover) ---------------------

const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function bars(title, pairs, format) {
  const box = el("div", "chart");
  box.appendChild(el("h3", "", title));
  // A day ("2026-11-27") shown as "26-11-27"; a word whole, its column as wide as it.
  const shown = (label) => { const t = String(label); return t.length > 9 ? t.slice(-8) : t; };
  const w = Math.max(46, ...pairs.map((p) => shown(p[0]).length * 6 + 8));
  const h = 60, max = Math.max(1e-9, ...pairs.map((p) => p[1]));
  const svg = svgEl("svg", { width: Math.max(60, pairs.length * w), height: h + 14, role: "img", "aria-label": title });
  pairs.forEach(([label, value], i) => {
    const bh = Math.max(1, (value / max) * h);
    const rect = svgEl("rect", { x: i * w + 3, y: h - bh, width: w - 6, height: bh, tabindex: 0 });
    rect.appendChild(svgEl("title", {}, label + ": " + format(value)));
    svg.appendChild(rect);
    svg.appendChild(svgEl("text", { x: i * w + w / 2, y: h + 11, "text-anchor": "middle" }, shown(label)));
  });
  box.appendChild(svg);
  return box;
}

function charts(stats) {
  const box = $("charts");
  box.textContent = "";
  if (!stats) return;
  box.appendChild(bars("cost per day", stats.cost_per_day, money));
  box.appendChild(bars("cost per provider", stats.cost_per_provider, money));
  box.appendChild(bars("tasks by outcome", stats.by_outcome, (n) => n + " task(s)"));
  const median = el("div", "chart");
  median.appendChild(el("h3", "", "median duration"));
  median.appendChild(el("div", "big", duration(stats.median_duration_ms)));
  median.appendChild(el("div", "muted", "total " + money(stats.total_cost_usd)));
  box.appendChild(median);
}

// ---- submit ----------------------------------------------------------------------------

async function loadProviders() {
  const { ok, body } = await api("/v1/providers");
  const select = $("s-provider");
  select.textContent = "";
  if (!ok) return;
  for (const p of body.providers) {
    const state = p.usable ? "" : p.found ? " (not usable)" : " (not found)";
    const option = el("option", "", p.name + (p.kind !== "cli" ? " [" + p.kind + "]" : "") + (p.version ? " " + p.version : "") + state);
    option.value = p.name;
    option.title = (p.hints || []).join("\n");
    select.appendChild(option);
  }
  select.value = body.default;
}

async function submitTask(event) {
  event.preventDefault();
  $("s-error").textContent = "";
  const options = { provider: $("s-provider").value, push: $("s-push").checked };
  for (const [id, key] of [["s-base", "base"], ["s-model", "model"], ["s-expected", "expected"]]) {
    const v = $(id).value.trim();
    if (v) options[key] = v;
  }
  const body = { repo: $("s-repo").value.trim(), prompt: $("s-prompt").value, options };
  const res = await api("/v1/tasks", { method: "POST", body: JSON.stringify(body) });
  $("s-error").className = "error";
  if (res.status !== 201) { $("s-error").textContent = (res.body && res.body.message) || "HTTP " + res.status; return; }
  $("s-error").className = "muted";
  localStorage.setItem("forge.s-repo", body.repo);
  $("s-prompt").value = "";
  $("s-error").textContent = "submitted " + res.body.task_id;
}

// ---- a task's page ---------------------------------------------------------------------

let taskStreamCtl = null;

function section(parent, title) {
  parent.appendChild(el("h2", "", title));
  const div = el("div");
  parent.appendChild(div);
  return div;
}

function table(rows, head) {
  const t = el("table");
  if (head) {
    const tr = el("tr");
    for (const h of head) tr.appendChild(el("th", "", h));
    t.appendChild(tr);
  }
  for (const row of rows) {
    const tr = el("tr");
    for (const cell of row) {
      const td = el("td");
      if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell == null ? "-" : String(cell);
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
  return t;
}

function diffNode(patch) {
  const pre = el("pre", "diff");
  for (const line of patch.split("\n")) {
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
    pre.appendChild(el("span", cls, line));
  }
  return pre;
}

function renderTask(d) {
  const root = $("task");
  root.textContent = "";
  const c = d.card;
  root.dataset.task = c.task_id;
  root.dataset.column = c.column;
  document.title = "forge · " + c.title;
  root.appendChild(el("h1", "", c.title));
  root.appendChild(el("div", "muted", [c.task_id, c.column, c.outcome || c.state, c.repo, c.provider || "default",
    c.worker ? "@" + c.worker : "", "try " + c.attempts + "/" + c.max_attempts, duration(c.elapsed_ms), money(c.cost_usd)].filter(Boolean).join(" · ")));
  const prompt = el("details");
  prompt.appendChild(el("summary", "", "prompt"));
  prompt.appendChild(el("pre", "log", d.prompt || ""));
  root.appendChild(prompt);
  if (d.error) root.appendChild(el("div", "error", d.error));
  if (!share && c.source === "queue" && (c.column === "queued" || c.column === "running")) root.appendChild(cancelBox(c.task_id));
  // The task's agent waiting for an answer (permissions.js fills it, live).
  if (!share && c.column === "running") {
    const waiting = el("div", "cards");
    waiting.id = "t-permissions";
    waiting.setAttribute("aria-label", "Waiting for you");
    root.appendChild(waiting);
    showPermissions("task");
  }

  if (c.column === "held" && !share) root.appendChild(approvalBox(d));
  else if (d.approval && d.approval.decided_by) {
    root.appendChild(el("div", "decided", d.approval.state + " by " + d.approval.decided_by + (d.approval.reason ? ": " + d.approval.reason : "")));
  }

  const timeline = section(root, "Stages");
  timeline.id = "t-stages";
  timeline.appendChild(table(d.stages.map((s) => [s.stage, s.detail, when(s.at_ms), duration(s.duration_ms), money(s.cost_usd)]),
    ["stage", "detail", "at", "took", "cost so far"]));

  const events = section(root, "Agent events");
  const log = el("div", "events");
  log.id = "t-events";
  events.appendChild(log);

  const cycles = section(root, "Validation cycles");
  cycles.id = "t-cycles";
  for (const cy of d.cycles) {
    cycles.appendChild(el("h3", "", "cycle " + cy.n + " · " + cy.kind + " · " + money(cy.cost_usd) + " · " + (cy.passed === true ? "passed" : cy.passed === false ? "failed" : "not validated")));
    for (const s of cy.steps) {
      const step = el("details");
      step.appendChild(el("summary", "", s.name + " `" + s.command + "` exit " + (s.exit_code == null ? "killed" : s.exit_code) + " · " + duration(s.duration_ms)));
      step.appendChild(el("pre", "log", s.log || ""));
      cycles.appendChild(step);
    }
  }
  if (Array.isArray(d.tests) && d.tests.length) {
    cycles.appendChild(table(d.tests.map((t) => [t.step, t.already_failing.join(", "), t.newly_failing.join(", "), t.fixed.join(", ")]),
      ["step", "already failing", "newly failing", "fixed"]));
  }

  const review = section(root, "Review findings");
  review.id = "t-findings";
  if (!d.findings.length) review.appendChild(el("div", "muted", "none"));
  else review.appendChild(table(d.findings.map((f) => [el("span", "sev-" + f.severity, f.severity), f.rule, f.path + (f.line ? ":" + f.line : ""), f.message]),
    ["severity", "rule", "where", "message"]));

  const risk = section(root, "Risk");
  risk.id = "t-risk";
  if (d.risk) {
    risk.appendChild(el("div", "risk-" + d.risk.level, "score " + d.risk.score + " (" + d.risk.level + ")"));
    const ul = el("ul");
    for (const r of d.risk.reasons) ul.appendChild(el("li", "", r));
    risk.appendChild(ul);
  } else risk.appendChild(el("div", "muted", "not scored yet"));

  const delivery = section(root, "Delivery");
  delivery.id = "t-delivery";
  if (d.delivery) {
    const dl = d.delivery;
    delivery.appendChild(table([["decision", dl.decision], ["branch", dl.branch], ["commit", dl.commit], ["pushed", dl.pushed ? "yes" : "no"],
      ["push error", dl.push_error]].filter((r) => r[1] != null)));
  } else delivery.appendChild(el("div", "muted", "not delivered"));
  // Its pull request and the follow-ups that continue it (issue 39).
  if (d.pull_request && d.pull_request.url) {
    const pr = d.pull_request;
    const a = el("a", "", "#" + pr.number + " (" + pr.state + (pr.draft ? ", draft" : "") + ")");
    a.href = pr.url;
    a.id = "t-pull-request";
    delivery.appendChild(table([["pull request", a]]));
  }
  const taskLink = (id) => { const a = el("a", "", id); a.href = "/task/" + encodeURIComponent(id); return a; };
  if (d.parent) delivery.appendChild(table([["follow-up of", taskLink(d.parent)]]));
  if (Array.isArray(d.followups) && d.followups.length) {
    const list = el("div");
    list.id = "t-followups";
    d.followups.forEach((id, i) => { if (i) list.appendChild(document.createTextNode(", ")); list.appendChild(taskLink(id)); });
    delivery.appendChild(table([["follow-ups", list]]));
  }

  const diff = section(root, "Changes");
  diff.id = "t-diff";
  if (d.diff_note) diff.appendChild(el("div", "muted", d.diff_note));
  for (const f of d.files) {
    const file = el("details", "file");
    file.open = !f.large;
    file.appendChild(el("summary", "", f.path + " (" + f.change + ") +" + f.added + " −" + f.removed + (f.large ? " — large, folded" : "")));
    if (f.patch) file.appendChild(diffNode(f.patch));
    diff.appendChild(file);
  }
  if (!share && c.source === "queue") root.appendChild(shareBox(c.task_id));
}

// A queued task ends at once; a running one is stopped by its worker, on whichever machine.
function cancelBox(id) {
  const box = el("div", "toolbar");
  const button = el("button", "", "Cancel this task");
  button.id = "t-cancel";
  const answer = el("span", "decided");
  answer.id = "t-cancel-answer";
  answer.setAttribute("role", "status");
  button.addEventListener("click", async () => {
    button.disabled = true;
    const res = await api("/v1/tasks/" + encodeURIComponent(id), { method: "DELETE" });
    if (res.ok) answer.textContent = "Cancelled" + (res.status === 202 ? " — its worker is stopping it." : ".");
    else {
      answer.textContent = "Could not cancel: " + ((res.body && res.body.message) || res.status);
      button.disabled = false;
    }
  });
  box.append(button, " ", answer);
  return box;
}

function approvalBox(d) {
  const box = el("div", "approval");
  box.id = "t-approval";
  box.appendChild(el("b", "", "Held for approval" + (d.risk ? " — risk " + d.risk.score + " (" + d.risk.level + ")" : "")));
  const by = el("input");
  by.id = "a-by";
  by.placeholder = "your name";
  by.value = localStorage.getItem("forge.by") || "";
  const push = el("input");
  push.type = "checkbox";
  push.id = "a-push";
  const reason = el("input");
  reason.id = "a-reason";
  reason.placeholder = "reason (for a rejection)";
  reason.size = 30;
  const approve = el("button", "", "Approve");
  approve.id = "a-approve";
  const reject = el("button", "", "Reject");
  reject.id = "a-reject";
  const answer = el("div", "decided");
  answer.id = "a-answer";
  answer.setAttribute("role", "status");
  const label = (text, input) => { const l = el("label", "", text + " "); l.appendChild(input); return l; };
  box.append(" ", label("by", by), " ", label("push", push), " ", approve, " ", reason, " ", reject, answer);
  const id = d.card.approval_id;
  const repo = d.card.source === "local" ? "?repo=" + encodeURIComponent(d.card.repo) : "";
  const decide = async (action, body) => {
    localStorage.setItem("forge.by", by.value);
    const res = await api("/v1/approvals/" + encodeURIComponent(id) + "/" + action + repo, { method: "POST", body: JSON.stringify(body) });
    if (res.ok) answer.textContent = (action === "approve" ? "Approved" : "Rejected") + " — thank you.";
    else if (res.status === 409 && res.body && res.body.error === "already_decided") {
      answer.textContent = "Already " + res.body.state + " by " + (res.body.decided_by || "someone") + (res.body.decided_at_ms ? " at " + when(res.body.decided_at_ms) : "") + ".";
    } else answer.textContent = "Could not " + action + ": " + ((res.body && res.body.message) || res.status);
    approve.disabled = reject.disabled = true;
  };
  approve.addEventListener("click", () => decide("approve", { by: by.value, push: push.checked }));
  reject.addEventListener("click", () => decide("reject", { by: by.value, reason: reason.value || null }));
  return box;
}

function shareBox(id) {
  const box = el("div");
  box.appendChild(el("h2", "", "Share"));
  const make = el("button", "", "Make a read-only link");
  make.id = "share-make";
  const out = el("div");
  out.id = "share-links";
  box.append(make, out);
  const list = async () => {
    const res = await api("/v1/board/tasks/" + encodeURIComponent(id) + "/shares");
    if (!res.ok) { out.textContent = (res.body && res.body.message) || ""; return; }
    for (const l of res.body.shares) {
      if (out.querySelector(`[data-share="${l.share_id}"]`)) continue;
      const row = el("div", "", l.share_id + " " + (l.active ? "active" : "revoked") + " ");
      row.dataset.share = l.share_id;
      if (l.active) {
        const revoke = el("button", "", "Revoke");
        revoke.className = "share-revoke";
        revoke.addEventListener("click", async () => {
          await api("/v1/shares/" + encodeURIComponent(l.share_id), { method: "DELETE" });
          row.firstChild.textContent = l.share_id + " revoked ";
          revoke.remove();
        });
        row.appendChild(revoke);
      }
      out.appendChild(row);
    }
  };
  make.addEventListener("click", async () => {
    const res = await api("/v1/board/tasks/" + encodeURIComponent(id) + "/shares", { method: "POST" });
    if (res.status !== 201) { out.textContent = (res.body && res.body.message) || res.status; return; }
    const a = el("a", "", location.origin + res.body.url);
    a.href = res.body.url;
    a.id = "share-url";
    const row = el("div", "", "link (shown once): ");
    row.appendChild(a);
    out.prepend(row);
    list();
  });
  list();
  return box;
}

function eventLine(kind, ev) {
  const d = ev.data || {};
  const time = ev.at_ms ? new Date(ev.at_ms).toLocaleTimeString() + " " : "";
  if (kind === "stage") return time + "stage " + d.stage + " " + (d.detail || "") + " " + money(d.cost_usd);
  if (kind === "agent") {
    if (d.type === "text") return time + "text " + (d.text || "");
    if (d.type === "tool_call_started") return time + "tool " + d.name + " " + summary(d.input);
    if (d.type === "tool_call_finished") return time + "tool done " + (d.is_error ? "✗" : "✓") + (d.exit_code != null ? " exit " + d.exit_code : "");
    return time + d.type + " " + (d.message || "");
  }
  return time + kind + " " + JSON.stringify(d);
}

async function openTask(id) {
  const detailUrl = share ? "/v1/shared/" + encodeURIComponent(share) : "/v1/board/tasks/" + encodeURIComponent(id);
  const res = await api(detailUrl);
  // Another task's requests are not this one's; its stream says which are. (After the
  // await: permissions.js is loaded by then.)
  perms.lists.task.clear();
  if (!res.ok) {
    $("task").textContent = "";
    $("task").appendChild(el("div", "error", (res.body && res.body.message) || "HTTP " + res.status));
    return;
  }
  renderTask(res.body);
  const taskId = res.body.card.task_id;
  if (res.body.card.source !== "queue") return;
  // A task that has ended is drawn once: its events only fill the log.
  const open = res.body.card.column === "queued" || res.body.card.column === "running";
  if (taskStreamCtl) taskStreamCtl.abort();
  const controller = new AbortController();
  taskStreamCtl = controller;
  const eventsUrl = share ? "/v1/shared/" + encodeURIComponent(share) + "/events" : "/v1/tasks/" + encodeURIComponent(taskId) + "/events";
  let lastId = 0;
  while (!controller.signal.aborted) {
    const h = headers(false);
    if (lastId) h["Last-Event-ID"] = String(lastId);
    try {
      const r = await fetch(eventsUrl, { headers: h, signal: controller.signal });
      if (!r.ok) { $("t-live").textContent = "events: " + r.status; return; }
      $("t-live").textContent = "● live";
      let ended = false;
      await readEvents(r, ({ id: seq, event: kind, data }) => {
        if (!data) return false;
        if (!share && permissionMessage("task", kind, data)) return false;
        if (seq !== null) lastId = Number(seq);
        const ev = JSON.parse(data);
        if (kind === "task") { ended = true; return true; }
        if (ev.at_ms) board.latencies.push(Date.now() - ev.at_ms);
        const log = $("t-events");
        if (log) {
          log.appendChild(el("div", "ev ev-" + kind, eventLine(kind, ev)));
          log.scrollTop = log.scrollHeight;
          document.body.dataset.lastEvent = String(lastId);
        }
        if (open && (kind === "stage" || kind === "finished" || kind === "claimed")) refreshTaskSoon(detailUrl);
        return false;
      });
      if (ended) {
        clearTimeout(taskRefresh);
        $("t-live").textContent = "ended";
        const again = open ? await api(detailUrl) : { ok: false };
        if (again.ok) {
          const log = $("t-events");
          const kept = log ? [...log.childNodes] : [];
          renderTask(again.body);
          $("t-events").append(...kept);
        }
        return;
      }
    } catch (e) {
      if (controller.signal.aborted) return;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

let taskRefresh = null;
function refreshTaskSoon(url) {
  clearTimeout(taskRefresh);
  taskRefresh = setTimeout(async () => {
    const res = await api(url);
    if (!res.ok) return;
    const log = $("t-events");
    const kept = log ? [...log.childNodes] : [];
    renderTask(res.body);
    $("t-events").append(...kept);
  }, 300);
}

// ---- start -----------------------------------------------------------------------------

let boardOpened = false;
function openBoard() {
  if (!boardOpened) {
    boardOpened = true;
    for (const f of ["f-repo", "f-provider", "f-worker"]) $(f).addEventListener("change", loadBoard);
    $("new-task").addEventListener("click", () => {
      $("submit-form").hidden = !$("submit-form").hidden;
      if (!$("submit-form").hidden) {
        loadProviders();
        $("s-repo").value = $("s-repo").value || localStorage.getItem("forge.s-repo") || $("project").value;
        $("s-prompt").focus();
      }
    });
    $("s-close").addEventListener("click", () => { $("submit-form").hidden = true; });
    $("submit-form").addEventListener("submit", submitTask);
    $("s-prompt").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submitTask(e); });
  }
  loadBoard();
}

window.addEventListener("hashchange", showView);
// A token typed in: the view asks again with it.
$("token").addEventListener("change", () => { if (currentView() !== "chat") showView(); });
showView();
