/* The play page (agents/human/server.py serves it): polls GET /state, draws the table with
   NertzTable (table.js), and sends the person's moves (clicks, drag and drop, the buttons
   or typed move text) as POST /move with the tick of the position shown, each post after
   the last one answered; the seat and team come from the JSON in #play-boot. The hand waits
   at tick 0 until Start (POST /start). A queued move is drawn on the position it applies to
   (its cards framed as queued) until its tick plays; a refusal is cleared by the next
   accepted move and by the end of the hand. */
(function () {
  "use strict";
  var boot = JSON.parse(document.getElementById("play-boot").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var state = null, selected = null, dragging = false, lastKey = "";

  function showError(text) {
    $("error").textContent = text || "";
    $("error").className = text ? "refused" : "";
  }

  // Posts go one after another, so the server sees them in the order the person made them
  // (Start, then a quick first move: in parallel the move could arrive first and be refused).
  var posted = Promise.resolve();
  function post(path, body) {
    var res = posted.then(function () {
      return fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                          body: JSON.stringify(body)});
    }).then(function (r) { return r.json(); });
    posted = res.catch(function () {});
    return res;
  }

  function queuedText(move, tick) {
    return "queued for the end of tick " + tick + ": " + move + " (on the table shown)";
  }

  function send(move) {
    selected = null;
    var body = {move: move};
    if (state) body.tick = state.tick;
    return post("/move", body).then(function (res) {
      if (res.ok) {
        showError("");
        if (state) { state.queued = res.queued; state.queued_tick = res.tick; }
        $("queued").textContent = queuedText(res.queued, res.tick);
      } else {
        showError(move + " refused: " + res.error);
      }
      draw(true);
    });
  }

  function queuedParts(move) {               // the data-src / data-dst a queued move names
    var out = {src: [], dst: null, flip: move === "flip"};
    var m = /^([^>]+)>(.+)$/.exec(move || "");
    if (!m) return out;
    m[1].split("+").forEach(function (part) {
      var r = /^river(\d+)(?::(\d+))?$/.exec(part);
      if (!r) { out.src.push(part); return; }
      var col = parseInt(r[1], 10), cards = state.layout.teams[boot.team].river[col] || [];
      var from = r[2] === undefined ? cards.length - 1 : parseInt(r[2], 10);
      for (var i = Math.max(0, from); i < cards.length; i++) out.src.push("river" + col + ":" + i);
    });
    if (m[2].indexOf("river") === 0) out.dst = m[2];
    return out;
  }

  function markQueued() {
    if (!state.queued || state.hand_over) return;
    var box = document.querySelector('.team[data-team="' + boot.team + '"]');
    if (!box) return;
    var q = queuedParts(state.queued);
    q.src.forEach(function (src) {
      var e = box.querySelector('[data-src="' + src + '"]');
      if (e) e.classList.add("queued-src");
    });
    if (q.dst) {
      var d = box.querySelector('[data-dst="' + q.dst + '"]');
      if (d) d.classList.add("queued-dst");
    }
    if (q.flip) {
      var f = box.querySelector("[data-action=flip]");
      if (f) f.classList.add("queued-src");
    }
  }

  function topIndex(col) { return state.layout.teams[boot.team].river[col].length - 1; }

  function moveText(src, dst) {              // docs/api.md move text, or null for no move
    var river = /^river(\d+):(\d+)$/.exec(src);
    if (dst === "lake") {
      if (river && parseInt(river[2], 10) === topIndex(parseInt(river[1], 10)))
        return "river" + river[1] + ">lake";
      return src + ">lake";
    }
    if (river) return river[1] === dst.slice(5) ? null : src + ">" + dst;
    return src + ">" + dst;
  }

  function draw(force) {
    if (!state || dragging) return;
    var key = JSON.stringify([state.layout, selected, state.scores, state.queued, state.hand_over]);
    if (force !== true && key === lastKey) return;
    lastKey = key;
    NertzTable.render($("table"), state.layout, {seatTeam: state.seat_team, agents: state.agents,
      scores: state.scores, active: state.hand_over ? -1 : boot.team, selected: selected});
    document.querySelectorAll("[data-src]").forEach(function (e) { e.draggable = true; });
    markQueued();
  }

  function update(s) {
    state = s;
    var busy = s.layout.ready[s.seat] - s.tick;
    if (s.error) showError(s.error);
    else if (s.hand_over) showError("");       // the end shows only the result
    $("start").style.display = s.started || s.hand_over ? "none" : "";
    $("status").textContent = "tick " + s.tick + (s.paused ? " (paused)" : "") + " \u2014 " +
      (s.hand_over ? "hand over" : !s.started ? "press Start: the clock waits at tick 0" :
       (s.ready ? "your seat is ready" : "busy for " + busy + " tick(s)"));
    $("queued").textContent = s.queued && !s.hand_over ? queuedText(s.queued, s.queued_tick) : "";
    $("call").style.display = s.legal.indexOf("call") >= 0 ? "" : "none";
    $("pause").textContent = s.paused ? "resume" : "pause";
    var legal = $("legal");
    var have = Array.prototype.map.call(legal.children, function (b) { return b.textContent; });
    var offer = s.hand_over ? [] : s.legal;
    if (have.join() !== offer.join()) {
      legal.textContent = "";
      offer.forEach(function (m) {
        var b = document.createElement("button");
        b.textContent = m;
        b.addEventListener("click", function () { send(m); });
        legal.appendChild(b);
      });
    }
    var log = $("log");
    if (log.children.length !== s.log.length || (s.log.length && log.lastChild.textContent !== s.log[s.log.length - 1])) {
      log.textContent = "";
      s.log.slice().reverse().forEach(function (line) {
        var li = document.createElement("li");
        li.textContent = line;
        log.appendChild(li);
      });
    }
    if (s.hand_over) {
      selected = null;
      $("final").className = "shown";
      $("final").textContent = "Hand over at tick " + s.tick + ". Final scores: " +
        s.scores.map(function (x, t) { return "team " + t + (t === s.team ? " (you)" : "") + " " + (x >= 0 ? "+" : "") + x; }).join(", ") +
        (s.replay ? ". Replay: " + s.replay : "");
    }
    draw(false);
  }

  function poll() {
    fetch("/state").then(function (r) { return r.json(); }).then(update)
      .catch(function () { $("status").textContent = "server gone"; })
      .then(function () {
        if (!(state && ((state.hand_over && state.replay) || state.error))) setTimeout(poll, 150);
      });
  }

  function pick(target) {                   // a click on the table
    if (!state || state.hand_over) return;
    if (target.closest("[data-action=flip]")) { send("flip"); return; }
    var src = target.closest("[data-src]");
    var dst = target.closest("[data-dst]");
    if (selected) {
      if (src && src.dataset.src === selected) { selected = null; draw(true); return; }
      var column = dst && dst.dataset.dst.indexOf("river") === 0 ? dst.dataset.dst : null;
      var fromCol = /^river(\d+)/.exec(selected);
      if (dst && !(column && fromCol && column === "river" + fromCol[1] && src)) {
        var m = moveText(selected, dst.dataset.dst);
        if (m) { send(m); return; }
      }
    }
    if (src) { selected = src.dataset.src; draw(true); }
  }

  $("table").addEventListener("click", function (e) { pick(e.target); });
  $("table").addEventListener("dragstart", function (e) {
    var src = e.target.closest && e.target.closest("[data-src]");
    if (!src) { e.preventDefault(); return; }
    selected = src.dataset.src;
    dragging = true;
    e.dataTransfer.setData("text/plain", selected);
    e.dataTransfer.effectAllowed = "move";
  });
  $("table").addEventListener("dragover", function (e) {
    if (e.target.closest && e.target.closest("[data-dst]")) e.preventDefault();
  });
  $("table").addEventListener("drop", function (e) {
    e.preventDefault();
    dragging = false;
    var dst = e.target.closest("[data-dst]");
    var src = e.dataTransfer.getData("text/plain") || selected;
    var m = dst && src ? moveText(src, dst.dataset.dst) : null;
    if (m) send(m); else { selected = null; draw(true); }
  });
  $("table").addEventListener("dragend", function () { if (dragging) { dragging = false; draw(true); } });
  $("flip").addEventListener("click", function () { send("flip"); });
  $("wait").addEventListener("click", function () { send("wait"); });
  $("call").addEventListener("click", function () { send("call"); });
  $("send").addEventListener("click", function () { if ($("move-text").value) send($("move-text").value); });
  $("move-text").addEventListener("keydown", function (e) { if (e.key === "Enter") $("send").click(); });
  $("pause").addEventListener("click", function () { post("/pause", {paused: !(state && state.paused)}); });
  $("start").addEventListener("click", function () {
    $("start").style.display = "none";
    post("/start", {});
  });
  poll();
})();
