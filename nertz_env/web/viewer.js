/* The replay viewer's controls (nertz_env/replay/html.py inlines this file): a range input
   over the positions, previous / next / play, the arrow keys (Home / End for the ends), the
   next and previous tick with an event, and a speed selector. Reads the hand from the JSON
   in #replay-data: compact records (html.py's frame_records), each a keyframe (a whole flat
   position) or the piles that changed since the record before; a position is rebuilt from
   the keyframe before it (html.py's unflatten is the same rule) and drawn with NertzTable
   (table.js). A picture is the table at the start of its tick, before that tick's moves;
   the moves listed are the ones chosen at that tick (notation.py). A long hand's page keeps
   only some positions (html.py's page_sampling); #sampled says which. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var recs = data.frames, n = recs.length, i = 0, timer = null;
  var flat = null, at = -1;            // the flat position of record `at`
  var $ = function (id) { return document.getElementById(id); };
  var scrub = $("scrub");
  scrub.max = n - 1;

  function apply(k) {                   // flat becomes the position of record k
    if (k === at) return;
    var from = k - (k % data.key_every);
    if (!(at >= from && at < k)) { flat = {}; at = from - 1; }
    for (var j = at + 1; j <= k; j++) {
      var d = recs[j].diff;
      if (recs[j].key) flat = {};
      for (var name in d) if (Object.prototype.hasOwnProperty.call(d, name)) flat[name] = d[name];
    }
    at = k;
  }

  function unflatten(f) {
    var lay = {lake: [], teams: []}, p, t, c, name;
    for (p = 0; p < f["lake.n"]; p++) lay.lake.push(f["lake." + p]);
    for (t = 0; t < f["teams.n"]; t++) {
      var team = {river: []}, pre = "teams." + t + ".";
      for (c = 0; c < f[pre + "river.n"]; c++) team.river.push(f[pre + "river." + c]);
      for (name in f) {
        if (name.indexOf(pre) === 0 && name.slice(pre.length).indexOf("river") !== 0) {
          team[name.slice(pre.length)] = f[name];
        }
      }
      lay.teams.push(team);
    }
    for (name in f) {
      if (name.indexOf("lake.") !== 0 && name.indexOf("teams.") !== 0) lay[name] = f[name];
    }
    return lay;
  }

  function frame(k) {
    apply(k);
    var r = recs[k];
    return {layout: unflatten(flat), scores: r.scores, moves: r.moves, events: r.events,
            applied: r.applied.split("").map(function (x) { return x === "1"; }),
            order: r.order.split("").map(function (x) { return parseInt(x, 16); })};
  }

  var lastTick = null;
  function tickOf(k) { return frame(k).layout.tick; }

  function eventful(k) { return recs[k].events.length > 0; }

  function show(k) {
    i = Math.max(0, Math.min(n - 1, k));
    $("note").textContent = "";
    if (lastTick === null) { var keep = i; lastTick = tickOf(n - 1); i = keep; }
    var f = frame(i);
    scrub.value = i;
    $("tick-label").textContent = "tick " + f.layout.tick + " / " + lastTick + ", before its moves";
    NertzTable.render($("table"), f.layout, {seatTeam: data.seat_team, agents: data.agents,
                                             scores: f.scores, colourNames: data.colour_names});
    var moves = $("moves");
    moves.textContent = "";
    if (!f.moves.length) {
      var end = document.createElement("li");
      end.textContent = "end of the hand: " + data.end;
      moves.appendChild(end);
    }
    f.order.forEach(function (s) {
      var li = document.createElement("li");
      var ok = f.applied.length ? f.applied[s] : true;
      var t = data.seat_team[s];
      li.className = f.moves[s] === "wait" ? "wait" : (ok ? "applied" : "failed");
      li.dataset.seat = s;
      li.textContent = "seat " + s + " (" + data.agents[s] + ", team " + t + " (" +
        data.colour_names[t] + ")): " + f.moves[s] + (ok ? "" : " (failed)");
      moves.appendChild(li);
    });
    var ev = $("events");
    ev.textContent = "";
    if (!f.events.length) {
      var none = document.createElement("li");
      none.className = "none";
      none.textContent = "none";
      ev.appendChild(none);
    }
    f.events.forEach(function (e) {
      var li = document.createElement("li");
      li.textContent = e;
      ev.appendChild(li);
    });
  }

  function seek(step) {                 // the next (step 1) or previous (-1) eventful tick
    for (var k = i + step; k >= 0 && k < n; k += step) {
      if (eventful(k)) { show(k); return; }
    }
    $("note").textContent = step > 0 ? "no later event" : "no earlier event";
  }

  function play() {
    if (timer) { clearInterval(timer); timer = null; $("play").textContent = "\u25b6 play"; return; }
    $("play").textContent = "\u23f8 pause";
    timer = setInterval(function () {
      if (i >= n - 1) { play(); return; }
      show(i + 1);
    }, parseInt($("speed").value, 10));
  }

  if (data.sampled) { $("sampled").textContent = data.sampled; $("sampled").hidden = false; }
  var legend = $("legend");
  data.legend.forEach(function (line, k) {
    var li = document.createElement("li");
    if (!k) li.className = "head";
    li.textContent = line;
    legend.appendChild(li);
  });
  var swatches = $("colours");
  data.colours.forEach(function (c, t) {
    var s = document.createElement("span");
    s.className = "swatch team-" + (t % 8);
    s.dataset.team = t;
    s.textContent = "team " + t + " (" + data.colour_names[t] + ")";
    swatches.appendChild(s);
  });

  scrub.addEventListener("input", function () { show(parseInt(scrub.value, 10)); });
  $("prev").addEventListener("click", function () { show(i - 1); });
  $("next").addEventListener("click", function () { show(i + 1); });
  $("play").addEventListener("click", play);
  $("next-event").addEventListener("click", function () { seek(1); });
  $("prev-event").addEventListener("click", function () { seek(-1); });
  $("speed").addEventListener("change", function () { if (timer) { play(); play(); } });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") { show(i + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { show(i - 1); e.preventDefault(); }
    else if (e.key === "Home") show(0);
    else if (e.key === "End") show(n - 1);
    else if (e.key === "n") seek(1);
    else if (e.key === "p") seek(-1);
    else if (e.key === " ") { play(); e.preventDefault(); }
  });
  show(0);
})();
