"use strict";
// The forge chat page: starts runs through the API and follows their event streams with
// fetch (so the bearer token can be sent), resuming by event id after a network drop or a
// page reload.

const $ = (id) => document.getElementById(id);
const SAVED = "forge.current";
let current = null; // {runId, lastId, turn, controller, finished, cancelled, started}
let timer = null;

function headers(json) {
  const h = {};
  const token = $("token").value.trim();
  if (token) h["Authorization"] = "Bearer " + token;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

function remember() {
  for (const id of ["project", "provider", "agent", "token"]) localStorage.setItem("forge." + id, $(id).value);
}

function recall() {
  for (const id of ["project", "provider", "agent", "token"]) {
    const v = localStorage.getItem("forge." + id);
    if (v !== null) $(id).value = v;
  }
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function newTurn(prompt) {
  const turn = el("div", "turn");
  turn.appendChild(el("div", "user", prompt));
  const answer = el("div", "answer");
  turn.appendChild(answer);
  $("transcript").appendChild(turn);
  return turn;
}

function answerOf(turn) {
  let answers = turn.querySelectorAll(".answer");
  return answers[answers.length - 1];
}

function scrollDown() {
  const t = $("transcript");
  t.scrollTop = t.scrollHeight;
}

function setStatus(s) { $("status").textContent = s; }
function setConnection(s) { $("connection").textContent = s; }

function setBusy(busy) {
  $("send").disabled = busy;
  $("cancel").disabled = !busy;
}

function save() {
  if (!current) { sessionStorage.removeItem(SAVED); return; }
  sessionStorage.setItem(SAVED, JSON.stringify({
    runId: current.runId, lastId: current.lastId, started: current.started,
    html: $("transcript").innerHTML,
  }));
}

function startTimer() {
  clearInterval(timer);
  timer = setInterval(() => {
    if (current) $("duration").textContent = ((Date.now() - current.started) / 1000).toFixed(1) + "s";
  }, 200);
}

function render(cur, kind, ev) {
  const turn = cur.turn;
  switch (kind) {
    case "text": {
      const answer = answerOf(turn);
      if (ev.delta) {
        answer.textContent += ev.text;
        answer.dataset.streamed = "1";
      } else if (answer.dataset.streamed) {
        // The whole block the deltas already built.
        delete answer.dataset.streamed;
      } else {
        answer.textContent += ev.text;
      }
      break;
    }
    case "tool_call_started": {
      const line = el("div", "tool running", ev.name + " " + summary(ev.input));
      line.dataset.call = ev.call_id;
      turn.appendChild(line);
      // Text after a tool call goes below it.
      turn.appendChild(el("div", "answer"));
      break;
    }
    case "tool_call_finished": {
      const line = [...turn.querySelectorAll(".tool")].find((l) => l.dataset.call === ev.call_id);
      if (line) line.className = "tool " + (ev.is_error ? "failed" : "ok");
      break;
    }
    case "error":
      turn.appendChild(el("div", "error", ev.message));
      break;
    case "permission_requested":
    case "permission_decided":
      // permissions.js: the request with its buttons, answered in place.
      renderPermissionEvent(turn, kind, ev);
      break;
    case "usage_update":
      showUsage(ev.usage);
      break;
    case "completed":
      if (ev.usage) showUsage(ev.usage);
      if (ev.cost_usd != null) $("cost").textContent = "$" + ev.cost_usd.toFixed(4);
      break;
  }
  scrollDown();
}

function summary(input) {
  if (input == null) return "";
  if (typeof input !== "object") return String(input).slice(0, 80);
  const v = input.command ?? input.cmd ?? input.file_path ?? input.path ?? input.pattern ?? input.url;
  return v == null ? "" : String(v).slice(0, 80);
}

function showUsage(u) {
  if (!u) return;
  $("tokens").textContent = (u.input_tokens ?? 0) + " in / " + (u.output_tokens ?? 0) + " out";
}

function finish(cur, result) {
  cur.finished = true;
  clearInterval(timer);
  const m = result.metadata || {};
  const cancelled = (result.errors || []).some((e) => e.kind === "cancelled");
  setStatus(result.status + (cancelled ? " (cancelled)" : ""));
  if (m.cost_usd != null) $("cost").textContent = "$" + m.cost_usd.toFixed(4);
  if (m.duration_ms != null) $("duration").textContent = (m.duration_ms / 1000).toFixed(1) + "s";
  showUsage(m.usage);
  const answer = answerOf(cur.turn);
  if (!answer.textContent && result.content && !cur.turn.querySelector(".tool")) answer.textContent = result.content;
  // A cancelled run's other errors (the CLI's exit on the signal) are the cancel's echo.
  if (!cancelled) {
    for (const e of result.errors || []) cur.turn.appendChild(el("div", "error", e.message || e.reason || e.kind));
  }
  current = null;
  save();
  setBusy(false);
  setConnection("");
  loadRuns();
}

// One Server-Sent Events message block as {id, event, data} (comment lines skipped).
function parseBlock(block) {
  let id = null, event = "message", data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data += (data ? "\n" : "") + value;
  }
  return { id, event, data };
}

// Reads an event stream response to its end, handing each message to `onMessage`; stops
// early when it returns true.
async function readEvents(res, onMessage) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let i;
    while ((i = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      if (onMessage(parseBlock(block))) return;
    }
  }
}

function handleMessage(cur, { id, event, data }) {
  if (!data) return;
  const payload = JSON.parse(data);
  if (event === "result") {
    finish(cur, payload);
    return;
  }
  if (id !== null) cur.lastId = Number(id);
  render(cur, event, payload);
  save();
}

async function readStream(cur) {
  const h = headers(false);
  if (cur.lastId) h["Last-Event-ID"] = String(cur.lastId);
  const res = await fetch("/v1/runs/" + encodeURIComponent(cur.runId) + "/events", { headers: h, signal: cur.controller.signal });
  if (res.status === 404 || res.status === 400 || res.status === 401) {
    cur.turn.appendChild(el("div", "error", "stream: " + res.status + " " + (await res.text())));
    cur.finished = true;
    current = null;
    save();
    setBusy(false);
    setStatus("error");
    return;
  }
  if (!res.ok) throw new Error("HTTP " + res.status);
  setConnection("live");
  await readEvents(res, (message) => {
    handleMessage(cur, message);
    return cur.finished;
  });
}

async function follow(runId, lastId, turn, started) {
  current = { runId, lastId, turn, controller: new AbortController(), finished: false, cancelled: false, started };
  const cur = current;
  $("run-id").textContent = runId;
  setBusy(true);
  setStatus("running");
  startTimer();
  save();
  while (!cur.finished) {
    try {
      await readStream(cur);
    } catch (e) {
      if (cur.controller.signal.aborted) return;
    }
    if (!cur.finished) {
      setConnection("reconnecting…");
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function send(event) {
  event.preventDefault();
  const prompt = $("prompt").value;
  if (!prompt.trim() || current) return;
  remember();
  const turn = newTurn(prompt);
  $("cost").textContent = "-";
  $("tokens").textContent = "-";
  const body = { provider: $("provider").value, prompt, workdir: $("project").value.trim() };
  const agent = $("agent").value.trim();
  if (agent) body.agent = agent;
  setStatus("starting");
  const res = await fetch("/v1/runs", { method: "POST", headers: headers(true), body: JSON.stringify(body) });
  if (res.status !== 201) {
    let message = await res.text();
    try { message = JSON.parse(message).message; } catch (_) { /* as text */ }
    turn.appendChild(el("div", "error", message));
    setStatus("error");
    return;
  }
  $("prompt").value = "";
  const created = await res.json();
  follow(created.run_id, 0, turn, Date.now());
}

async function cancel() {
  if (!current) return;
  current.cancelled = true;
  setStatus("cancelling");
  await fetch("/v1/runs/" + encodeURIComponent(current.runId), { method: "DELETE", headers: headers(false) });
  // The stream goes on to its end: the cancelled result.
}

async function loadRuns() {
  const project = $("project").value.trim();
  const list = $("runs");
  if (!project) return;
  const res = await fetch("/v1/runs?workdir=" + encodeURIComponent(project), { headers: headers(false) });
  if (!res.ok) return;
  const body = await res.json();
  list.textContent = "";
  for (const run of body.runs.slice(0, 50)) {
    const r = run.record;
    const li = el("li", "", new Date(r.started_at_ms).toLocaleTimeString() + " " + r.provider + " " + (r.status || run.state));
    li.dataset.run = r.run_id;
    li.title = r.run_id;
    li.addEventListener("click", () => replay(r.run_id));
    list.appendChild(li);
  }
}

async function replay(runId) {
  if (current) return;
  const turn = newTurn("(run " + runId + ")");
  follow(runId, 0, turn, Date.now());
}

// The controls work at once; the chat's own requests (the project's default, its runs, a
// run to resume, the queue's list) wait until the chat is shown: on the board they would
// only compete with the board's first request (see `openChat`).
function init() {
  recall();
  $("composer").addEventListener("submit", send);
  $("cancel").addEventListener("click", cancel);
  $("refresh").addEventListener("click", loadRuns);
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send(e);
  });
  for (const id of ["project", "provider", "agent", "token"]) $(id).addEventListener("change", remember);
}

// The project field, when empty, set to the server's first root.
async function defaultProject() {
  if ($("project").value) return;
  const res = await fetch("/v1/info", { headers: headers(false) });
  if (res.ok) {
    const info = await res.json();
    if (info.roots && info.roots.length && !$("project").value) $("project").value = info.roots[0];
  }
}

let chatOpened = false;
async function openChat() {
  if (chatOpened) return;
  chatOpened = true;
  loadTasks();
  await defaultProject();
  // A reload mid-run: the transcript so far, then the stream from the last event seen.
  const saved = JSON.parse(sessionStorage.getItem(SAVED) || "null");
  if (saved && saved.runId) {
    $("transcript").innerHTML = saved.html || "";
    const turns = $("transcript").querySelectorAll(".turn");
    const turn = turns.length ? turns[turns.length - 1] : newTurn("(run " + saved.runId + ")");
    setConnection("resuming from event " + (saved.lastId || 0));
    follow(saved.runId, saved.lastId || 0, turn, saved.started || Date.now());
  }
  loadRuns();
}

init();

// `serve --queue`: the queue's tasks, whichever worker runs them. A click streams a task's
// stored events (resumed by id after a drop); "cancel" stops it on its worker.
let taskStream = null;

async function loadTasks() {
  const res = await fetch("/v1/tasks?limit=50", { headers: headers(false) });
  if (!res.ok) return; // 404: this serve has no queue
  for (const id of ["queue-head", "tasks", "task-events"]) $(id).hidden = false;
  const body = await res.json();
  const list = $("tasks");
  list.textContent = "";
  for (const t of body.tasks) {
    const li = el("li", "", t.state + " " + (t.worker || "-") + " " + t.prompt.slice(0, 40));
    li.title = t.task_id;
    li.addEventListener("click", () => followTask(t.task_id));
    if (t.state === "queued" || t.state === "running") {
      const stop = el("button", "", "cancel");
      stop.type = "button";
      stop.addEventListener("click", async (e) => {
        e.stopPropagation();
        await fetch("/v1/tasks/" + encodeURIComponent(t.task_id), { method: "DELETE", headers: headers(false) });
        loadTasks();
      });
      li.appendChild(stop);
    }
    list.appendChild(li);
  }
}

function taskLine(id, kind, ev) {
  const when = ev.at_ms ? new Date(ev.at_ms).toLocaleTimeString() : "";
  const d = ev.data || {};
  const what = kind === "stage" ? d.stage + " " + (d.detail || "")
    : kind === "agent" ? d.type + " " + (d.text || d.name || d.message || "")
    : JSON.stringify(ev.data || ev);
  return "#" + (id || "-") + " " + when + " " + kind + " " + what + "\n";
}

async function followTask(taskId) {
  if (taskStream) taskStream.abort();
  const controller = new AbortController();
  taskStream = controller;
  const out = $("task-events");
  out.textContent = "";
  let lastId = 0;
  while (!controller.signal.aborted) {
    const h = headers(false);
    if (lastId) h["Last-Event-ID"] = String(lastId);
    try {
      const res = await fetch("/v1/tasks/" + encodeURIComponent(taskId) + "/events", { headers: h, signal: controller.signal });
      if (!res.ok) { out.textContent += "error " + res.status + "\n"; return; }
      let ended = false;
      await readEvents(res, ({ id, event: kind, data }) => {
        if (!data) return false;
        const seq = id === null ? null : Number(id);
        if (seq) lastId = seq;
        const ev = JSON.parse(data);
        if (kind === "task") {
          out.textContent += "task " + ev.state + (ev.report ? " (" + ev.report.status + ")" : "") + "\n";
          ended = true;
          return true;
        }
        out.textContent += taskLine(seq, kind, ev);
        return false;
      });
      if (ended) {
        loadTasks();
        return;
      }
    } catch (e) {
      if (controller.signal.aborted) return;
      await new Promise((r) => setTimeout(r, 1000)); // a dropped connection: resume by id
    }
  }
}

$("queue-refresh").addEventListener("click", loadTasks);
