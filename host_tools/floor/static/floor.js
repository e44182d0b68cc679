// The floor view's live updates: the server's event stream (/events) sends
// HTML it rendered; this script puts it in place. It records when each
// table's newest result appeared (window.floorShown) for the benches.
"use strict";
(function () {
  var body = document.body;
  var page = body.dataset.page;
  var table = body.dataset.table;
  window.floorShown = [];
  window.floorEvents = 0;

  function csrf() {
    var m = document.querySelector('meta[name="csrf"]');
    return m ? m.content : "";
  }

  // Every form that changes something carries the session's token.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.method.toLowerCase() !== "post") return;
    var input = f.querySelector('input[name="csrf"]');
    if (!input) {
      input = document.createElement("input");
      input.type = "hidden";
      input.name = "csrf";
      f.appendChild(input);
    }
    if (!input.value) input.value = csrf();
  });

  function fromHtml(html) {
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  function shown(id, round) {
    window.floorShown.push({table: id, round: round, at: Date.now()});
  }

  function putTile(id, html) {
    var grid = document.getElementById("grid");
    var old = document.getElementById("tile-" + id);
    var tile = fromHtml(html);
    if (!tile || !grid) return;
    var before = old ? old.dataset.resultRound : null;
    if (old) {
      old.replaceWith(tile);
    } else {
      var next = null;
      var tiles = grid.querySelectorAll(".tile");
      for (var i = 0; i < tiles.length; i++) {
        if (tiles[i].dataset.table > id) { next = tiles[i]; break; }
      }
      grid.insertBefore(tile, next);
    }
    if (tile.dataset.resultRound && tile.dataset.resultRound !== before) {
      shown(id, parseInt(tile.dataset.resultRound, 10));
    }
    since(tile);
  }

  function since(root) {
    var now = Date.now() / 1000;
    root.querySelectorAll("[data-since]").forEach(function (el) {
      var t = parseFloat(el.dataset.since);
      if (!t) return;
      var s = Math.max(0, Math.round(now - t));
      el.textContent = s < 60 ? s + " s ago" : s < 3600 ? Math.floor(s / 60) + " min ago"
        : Math.floor(s / 3600) + " h ago";
    });
  }

  function listen() {
    var q = "page=" + encodeURIComponent(page) + "&since=" + body.dataset.version;
    if (table) q += "&table=" + encodeURIComponent(table);
    var es = new EventSource("/events?" + q);
    window.floorStream = es;
    es.addEventListener("tiles", function (e) {
      var d = JSON.parse(e.data);
      Object.keys(d.tiles).forEach(function (id) { putTile(id, d.tiles[id]); });
      var s = document.getElementById("summary");
      if (s && d.summary) s.innerHTML = d.summary;
      window.floorEvents++;
    });
    es.addEventListener("alarms", function (e) {
      var el = document.getElementById("alarms");
      if (el) el.innerHTML = JSON.parse(e.data).html;
      window.floorEvents++;
    });
    es.addEventListener("audit", function (e) {
      // Only the newest page is live: an older or filtered one stays as it is.
      var el = document.getElementById("audit");
      var d = JSON.parse(e.data);
      if (el) {
        el.innerHTML = d.html;
        document.getElementById("audit-total").textContent = d.total;
        var more = document.getElementById("audit-more");
        if (more) {
          more.hidden = !d.older;
          if (d.older) document.getElementById("audit-older").href = d.older;
        }
      }
      window.floorEvents++;
    });
    es.addEventListener("health", function (e) {
      var el = document.getElementById("health");
      var h = fromHtml(JSON.parse(e.data).html);
      if (el && h) el.replaceWith(h);
      window.floorEvents++;
    });
    // The stream itself lost (the view's server gone): said until it is back.
    es.addEventListener("error", function () {
      var el = document.getElementById("stream-lost");
      if (el) el.hidden = false;
    });
    es.addEventListener("open", function () {
      var el = document.getElementById("stream-lost");
      if (el) el.hidden = true;
    });
    es.addEventListener("display", function (e) {
      var d = JSON.parse(e.data);
      var el = document.getElementById("display");
      var before = el.querySelector(".result.newest");
      el.innerHTML = d.html;
      if (d.round !== null && (!before || parseInt(before.dataset.round, 10) !== d.round)) {
        shown(table, d.round);
      }
      window.floorEvents++;
    });
  }

  if (["grid", "table", "alarms", "audit", "display"].indexOf(page) >= 0) {
    listen();
    // A page left for another holds no stream: the browser keeps only a few
    // connections to a site open, and a page kept for the back button would
    // hold one for nothing. Coming back, it is loaded anew (it may be stale).
    window.addEventListener("pagehide", function () {
      if (window.floorStream) window.floorStream.close();
    });
    window.addEventListener("pageshow", function (e) {
      if (e.persisted) window.location.reload();
    });
  }
  since(document);
  setInterval(function () { since(document); }, 1000);
})();
