/* The one picture of a Nertz table in a browser, from a docs/api.md layout dict.
 *
 * Used by the replay viewer (nertz_env/replay/html.py, one self-contained file) and by the
 * person-vs-bots page (agents/human/server.py): same card names (docs/rules.md R2 text), same
 * look, the notation of nertz_env/replay/notation.py: a pile's count is written "x5" under
 * its top card, River columns are named river0, river1, ... from the left, bottom card first,
 * and the team colours are the GIF's (table.css).
 * Plain JS, no framework, nothing fetched from the network.
 *
 *   NertzTable.render(root, layout, opts)   draws the table into the element `root`
 *     opts.seatTeam  team of each seat (RulesConfig.seat_team)
 *     opts.agents    a name per seat (optional)
 *     opts.scores    R29 hand score per team (optional)
 *     opts.colourNames  a colour name per team, shown after "Team N" (optional)
 *     opts.active    the team whose cards are clickable (play page), or -1
 *     opts.selected  the selected source, e.g. "waste" or "river2:1" (play page)
 *
 * Clickable things carry data attributes the play page reads: data-src on a source card
 * ("nertz", "waste", "riverC:I" with I counted from the column's bottom card) and data-dst
 * on a destination ("lake", "riverC"). Every card carries data-card (its docs/api.md text).
 */
(function (global) {
  "use strict";

  var SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  var SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

  function parseCard(text) {
    // "10H" -> {rank: "10", suit: "H", deck: null}; "AS@1" -> deck 1
    var at = text.indexOf("@");
    var body = at < 0 ? text : text.slice(0, at);
    return {
      rank: body.slice(0, -1), suit: body.slice(-1),
      deck: at < 0 ? null : parseInt(text.slice(at + 1), 10)
    };
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  // a face-up card; owner: the team whose deck it is (a colour mark on Lake cards)
  function cardEl(text, owner) {
    var c = parseCard(text);
    var red = c.suit === "H" || c.suit === "D";
    var e = el("div", "card " + (red ? "red" : "black"));
    e.dataset.card = text;
    e.title = text + " (" + c.rank + " of " + SUIT_NAME[c.suit] +
      (owner !== undefined && owner !== null ? ", team " + owner + "'s deck" : "") + ")";
    var corner = el("span", "corner");
    corner.appendChild(el("span", "rank", c.rank));
    corner.appendChild(el("span", "suit", SUIT_SYMBOL[c.suit] || "?"));
    e.appendChild(corner);
    e.appendChild(el("span", "pip", SUIT_SYMBOL[c.suit] || "?"));
    if (owner !== undefined && owner !== null) {
      e.classList.add("owner-" + (owner % 8));
      e.dataset.owner = owner;
    }
    return e;
  }

  function backEl(count, label) {
    var e = el("div", "card back");
    e.appendChild(el("span", "count", String(count)));
    if (label) e.title = label;
    return e;
  }

  function emptyEl(label) {
    return el("div", "card empty", label || "");
  }

  function renderLake(layout, opts) {
    var box = el("section", "lake");
    box.dataset.dst = "lake";
    box.appendChild(el("h2", null, "Lake"));
    var piles = el("div", "lake-piles");
    layout.lake.forEach(function (pile, i) {
      var top = pile[pile.length - 1];
      var c = parseCard(top);
      var p = el("div", "lake-pile" + (c.rank === "K" ? " dead" : ""));
      p.dataset.dst = "lake";
      p.dataset.pile = i;
      p.appendChild(cardEl(top, c.deck === null ? 0 : c.deck));
      p.appendChild(el("span", "pile-count", "x" + pile.length));
      piles.appendChild(p);
    });
    var slot = el("div", "lake-pile new-pile");
    slot.dataset.dst = "lake";
    slot.appendChild(emptyEl("ace"));
    slot.title = "an ace starts a new Lake pile (R10)";
    piles.appendChild(slot);
    box.appendChild(piles);
    return box;
  }

  function seatLine(layout, opts, team) {
    var parts = [];
    (opts.seatTeam || []).forEach(function (t, seat) {
      if (t !== team) return;
      var busy = layout.ready && layout.ready[seat] > layout.tick;
      var name = opts.agents ? opts.agents[seat] : "";
      parts.push("seat " + seat + (name ? " " + name : "") +
        (busy ? " (busy until " + layout.ready[seat] + ")" : ""));
    });
    return parts.join(", ");
  }

  function renderTeam(layout, opts, t) {
    var team = layout.teams[t];
    var active = opts.active === t;
    var box = el("section", "team team-" + (t % 8) + (active ? " active" : ""));
    box.dataset.team = t;
    var head = el("header");
    head.appendChild(el("span", "team-name", "Team " + t +
      (opts.colourNames && opts.colourNames[t] ? " (" + opts.colourNames[t] + ")" : "")));
    head.appendChild(el("span", "seats", seatLine(layout, opts, t)));
    if (opts.scores) head.appendChild(el("span", "score", (opts.scores[t] >= 0 ? "+" : "") + opts.scores[t]));
    if ((layout.callers || []).indexOf(t) >= 0) head.appendChild(el("span", "nertz-call", "NERTZ!"));
    box.appendChild(head);

    var row = el("div", "piles");
    // Nertz pile: the top card and how many
    var nertz = el("div", "pile nertz");
    nertz.appendChild(el("label", null, "Nertz"));
    if (team.nertz.length) {
      var top = cardEl(team.nertz[team.nertz.length - 1]);
      if (active) top.dataset.src = "nertz";
      nertz.appendChild(top);
    } else {
      nertz.appendChild(emptyEl("empty"));
    }
    nertz.appendChild(el("span", "pile-count nertz-count", "x" + team.nertz.length));
    row.appendChild(nertz);
    // Stream: stock (face down, a count) and waste (its top card)
    var stock = el("div", "pile stock");
    stock.appendChild(el("label", null, "Stock"));
    var left = team.stream.length - team.waste;
    var back = left ? backEl(left, left + " cards face down") : emptyEl("");
    if (active) back.dataset.action = "flip";
    stock.appendChild(back);
    stock.appendChild(el("span", "pile-count", "x" + left));
    row.appendChild(stock);
    var waste = el("div", "pile waste");
    waste.appendChild(el("label", null, "Waste"));
    if (team.waste) {
      var w = cardEl(team.stream[team.waste - 1]);
      if (active) w.dataset.src = "waste";
      waste.appendChild(w);
    } else {
      waste.appendChild(emptyEl(""));
    }
    waste.appendChild(el("span", "pile-count", "x" + team.waste));
    row.appendChild(waste);
    // River: every card of every column, overlapped, bottom card first
    var river = el("div", "river");
    team.river.forEach(function (col, c) {
      var column = el("div", "column");
      column.dataset.col = c;
      if (active) column.dataset.dst = "river" + c;
      column.appendChild(el("span", "col-name", "river" + c));
      if (!col.length) column.appendChild(emptyEl(""));
      col.forEach(function (card, i) {
        var e = cardEl(card);
        if (active) e.dataset.src = "river" + c + ":" + i;
        if (i === col.length - 1) e.classList.add("top");
        column.appendChild(e);
      });
      river.appendChild(column);
    });
    row.appendChild(river);
    box.appendChild(row);
    if (active && opts.selected) {
      var sel = box.querySelector('[data-src="' + opts.selected + '"]');
      if (sel) sel.classList.add("selected");
    }
    return box;
  }

  function render(root, layout, opts) {
    opts = opts || {};
    if (opts.active === undefined) opts.active = -1;
    root.textContent = "";
    root.classList.add("nertz-table");
    var info = el("div", "table-info");
    info.appendChild(el("span", "tick", "tick " + layout.tick));
    if (layout.burns) info.appendChild(el("span", "burns", "burns " + layout.burns));
    if (opts.scores) {
      info.appendChild(el("span", "scores", "scores " + opts.scores.map(function (s, t) {
        return "team " + t + " " + (s >= 0 ? "+" : "") + s;
      }).join(", ")));
    }
    root.appendChild(info);
    root.appendChild(renderLake(layout, opts));
    var teams = el("div", "teams");
    // the active team (the person) first, then the others in team order
    var order = layout.teams.map(function (_, t) { return t; });
    if (opts.active >= 0) order.sort(function (a, b) { return (b === opts.active) - (a === opts.active); });
    order.forEach(function (t) { teams.appendChild(renderTeam(layout, opts, t)); });
    root.appendChild(teams);
  }

  global.NertzTable = { render: render, parseCard: parseCard, cardEl: cardEl };
})(this);
