"use strict";
// The agents' permission requests (issue 41): the board's "Waiting for you" column, a
// queued task's requests on its page, a run's in the chat — each with Allow / Always /
// Deny (Deny takes an optional message for the agent). The first answer from anywhere
// stands; a later one is told which came first. Everything arrives as Server-Sent Events,
// nothing is polled: the board's stream (`/v1/board/events`) and a task's
// (`/v1/tasks/ID/events`) carry `permissions` (the pending ones when the stream opens),
// then `permission_requested` and `permission_decided` (board.js hands them to
// `permissionMessage`); the chat gets its run's on the run's stream.
// Uses `$`, `el` and `headers` of app.js and `currentView` of board.js; its own
// top-level names must not be theirs (one global scope).

// How long an answered request stays on the board, its answer shown, before it goes.
const PERM_KEEP_MS = 8000;
// The pending requests each stream says there are (`board`: every one; `task`: the task
// page's), and the decisions the streams told of (an answer given elsewhere).
const perms = { lists: { board: new Map(), task: new Map() }, decided: new Map() };

function permOwner(p) {
  const kind = Object.keys(p.owner || {})[0] || "run";
  return { kind, id: (p.owner || {})[kind] || "" };
}

function permSecondsLeft(p) {
  return Math.max(0, Math.round((p.expires_at_ms - Date.now()) / 1000));
}

// One line for a person: `Bash: cargo test` (the API adds it; an event's request has not).
function permSummary(p) {
  if (p.summary) return p.summary;
  const t = p.tool || {};
  const what = t.command || t.path || t.url;
  return (t.tool || p.id) + (what ? ": " + String(what).split("\n")[0] : "");
}

// The word of a decision as a person reads it.
function permOutcome(d) {
  if (!d) return "pending";
  const by = d.by || {};
  const who = by.source === "person" ? " by " + by.name : by.source === "rule" ? " by rule " + by.rule
    : by.source === "timeout" ? " (nobody answered in time)" : by.source === "cancelled" ? " (run cancelled)" : "";
  const word = { allow: "Allowed", allow_session: "Allowed for the session", deny: "Denied" }[d.decision] || d.decision;
  return word + who + (d.message && d.decision === "deny" ? ": " + d.message : "");
}

// One request with its buttons; the answer (or the one that came first) shown in it.
function permBox(p) {
  const box = el("div", "card perm");
  box.dataset.permission = p.id;
  box.appendChild(el("div", "title", permSummary(p)));
  const meta = el("div", "meta");
  meta.appendChild(el("span", "provider", p.provider));
  const owner = permOwner(p);
  if (owner.kind === "task") {
    const a = el("a", "", "task " + owner.id);
    a.href = "/task/" + encodeURIComponent(owner.id);
    meta.appendChild(a);
  } else meta.appendChild(el("span", "", "run " + owner.id));
  const left = el("span", "expires", permSecondsLeft(p) + "s left");
  left.dataset.expires = String(p.expires_at_ms);
  meta.appendChild(left);
  box.appendChild(meta);
  if (p.tool && p.tool.diff) box.appendChild(el("pre", "log", p.tool.diff));
  const buttons = el("div", "perm-buttons");
  const allow = el("button", "perm-allow", "Allow");
  const always = el("button", "perm-always", "Always");
  always.title = "allow this and the same again for the rest of the agent's session";
  const deny = el("button", "perm-deny", "Deny");
  const message = el("input", "perm-message");
  message.placeholder = "message for the agent (optional)";
  message.hidden = true;
  const send = el("button", "perm-send", "Send deny");
  send.hidden = true;
  const answer = el("div", "decided perm-answer");
  answer.setAttribute("role", "status");
  buttons.append(allow, " ", always, " ", deny, " ", message, " ", send);
  box.append(buttons, answer);
  const all = [allow, always, deny, send];
  const decide = async (decision, text) => {
    for (const b of all) b.disabled = true;
    const body = { decision };
    if (text) body.message = text;
    const by = localStorage.getItem("forge.by");
    if (by) body.by = by;
    const res = await fetch("/v1/permissions/" + encodeURIComponent(p.id), { method: "POST", headers: headers(true), body: JSON.stringify(body) });
    let out = null;
    try { out = await res.json(); } catch (_) { /* not JSON */ }
    if (res.ok) showPermAnswer(box, permOutcome(out.permission.decision), "answered");
    else if (res.status === 409 && out) showPermAnswer(box, "Already decided — " + permOutcome(out.decision), "already");
    else {
      answer.textContent = "Could not answer: " + ((out && out.message) || res.status);
      for (const b of all) b.disabled = false;
      return;
    }
  };
  allow.addEventListener("click", () => decide("allow"));
  always.addEventListener("click", () => decide("allow_session"));
  // Deny asks for the message first (it may stay empty).
  deny.addEventListener("click", () => {
    message.hidden = send.hidden = false;
    deny.hidden = true;
    message.focus();
  });
  send.addEventListener("click", () => decide("deny", message.value.trim()));
  message.addEventListener("keydown", (e) => { if (e.key === "Enter") decide("deny", message.value.trim()); });
  return box;
}

function showPermAnswer(box, text, state) {
  box.dataset.state = state;
  box.querySelector(".perm-answer").textContent = text;
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  box.querySelector(".perm-message").hidden = true;
}

// The requests shown in `container`: new ones added, those no longer pending shown
// answered (by whom, when a stream told), then removed after a while.
function fillPermissions(container, pending) {
  const ids = new Set(pending.map((p) => p.id));
  for (const node of [...container.children]) {
    const id = node.dataset.permission;
    if (ids.has(id) || node.dataset.leaving) continue;
    node.dataset.leaving = "1";
    setTimeout(() => node.remove(), PERM_KEEP_MS);
    if (node.dataset.state) continue;
    showPermAnswer(node, "Answered elsewhere", "elsewhere");
    const decision = perms.decided.get(id);
    const shown = (d) => { node.querySelector(".perm-answer").textContent = "Answered elsewhere — " + permOutcome(d); };
    if (decision) { shown(decision); continue; }
    // Decided while no stream was open (a reconnection): which answer stands, as stored.
    fetch("/v1/permissions/" + encodeURIComponent(id), { headers: headers(false) })
      .then((res) => (res.ok ? res.json() : null))
      .then((out) => { if (out) shown(out.permission.decision); })
      .catch(() => {});
  }
  for (const p of pending) {
    if (container.querySelector(`[data-permission="${CSS.escape(p.id)}"]`)) continue;
    container.appendChild(permBox(p));
  }
}

// Draws `scope`'s requests where they are shown (board.js calls it after it draws a task's
// page anew).
function showPermissions(scope) {
  const pending = [...perms.lists[scope].values()];
  if (scope === "board") {
    const column = document.querySelector('.column[data-column="waiting"] .cards');
    if (!column) return;
    fillPermissions(column, pending);
    const count = document.querySelector('.column[data-column="waiting"] .count');
    if (count) count.textContent = "(" + pending.length + ")";
    document.body.dataset.waiting = String(pending.length);
  } else if ($("t-permissions")) fillPermissions($("t-permissions"), pending);
}

// One message of the board's (`scope` "board") or a task's ("task") stream; false when it
// is not about permissions.
function permissionMessage(scope, kind, data) {
  if (kind !== "permissions" && kind !== "permission_requested" && kind !== "permission_decided") return false;
  const list = perms.lists[scope];
  const body = JSON.parse(data);
  if (kind === "permissions") {
    list.clear();
    for (const p of body.permissions || []) list.set(p.id, p);
  } else {
    const p = body.request;
    if (kind === "permission_requested" && !p.decision) list.set(p.id, p);
    else {
      list.delete(p.id);
      if (p.decision) perms.decided.set(p.id, p.decision);
    }
  }
  showPermissions(scope);
  return true;
}

// Every second: each request's time left (a count on the page, no request).
setInterval(() => {
  for (const span of document.querySelectorAll(".perm .expires[data-expires]")) {
    span.textContent = Math.max(0, Math.round((Number(span.dataset.expires) - Date.now()) / 1000)) + "s left";
  }
}, 1000);

// The chat: a run's request as its event comes, answered in place; its decision (from here
// or anywhere) shown when that event comes.
function renderPermissionEvent(turn, kind, ev) {
  const p = ev.request;
  if (!p) return;
  let box = turn.querySelector(`[data-permission="${CSS.escape(p.id)}"]`);
  if (kind === "permission_requested") {
    if (!box) {
      box = permBox(p);
      turn.appendChild(box);
    }
    if (p.decision) showPermAnswer(box, permOutcome(p.decision), "decided");
  } else if (kind === "permission_decided") {
    if (!box) {
      box = permBox(p);
      turn.appendChild(box);
    }
    showPermAnswer(box, permOutcome(p.decision), "decided");
  }
}
