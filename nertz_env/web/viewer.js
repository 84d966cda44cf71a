/* The replay viewer's controls (nertz_env/replay/html.py inlines this file): a range input
   over the ticks, previous / next / play, the arrow keys (Home / End for the ends), the next
   and previous tick with an event, and a speed selector. Reads the frames from the JSON in
   #replay-data and draws each with NertzTable (table.js). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var frames = data.frames, i = 0, timer = null;
  var $ = function (id) { return document.getElementById(id); };
  var scrub = $("scrub");
  scrub.max = frames.length - 1;

  function eventful(k) { return frames[k].events.length > 0; }

  function show(k) {
    i = Math.max(0, Math.min(frames.length - 1, k));
    $("note").textContent = "";
    var f = frames[i];
    scrub.value = i;
    $("tick-label").textContent = "tick " + f.tick + " / " + frames[frames.length - 1].tick;
    NertzTable.render($("table"), f.layout, {seatTeam: data.seat_team, agents: data.agents,
                                             scores: f.scores});
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
      li.className = f.moves[s] === "wait" ? "wait" : (ok ? "applied" : "failed");
      li.dataset.seat = s;
      li.textContent = "seat " + s + " (" + data.agents[s] + ", team " + data.seat_team[s] +
        "): " + f.moves[s] + (ok ? "" : "  \u2014 failed");
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
    for (var k = i + step; k >= 0 && k < frames.length; k += step) {
      if (eventful(k)) { show(k); return; }
    }
    $("note").textContent = step > 0 ? "no later event" : "no earlier event";
  }

  function play() {
    if (timer) { clearInterval(timer); timer = null; $("play").textContent = "\u25b6 play"; return; }
    $("play").textContent = "\u23f8 pause";
    timer = setInterval(function () {
      if (i >= frames.length - 1) { play(); return; }
      show(i + 1);
    }, parseInt($("speed").value, 10));
  }

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
    else if (e.key === "End") show(frames.length - 1);
    else if (e.key === "n") seek(1);
    else if (e.key === "p") seek(-1);
    else if (e.key === " ") { play(); e.preventDefault(); }
  });
  show(0);
})();
