// Live updates. Pages read without this script; with it, a page marked
// `data-live` listens to server-sent events (polling when EventSource is
// missing) and swaps in a fresh <main> when what it shows has changed.
(function () {
  "use strict";
  var live = document.body.getAttribute("data-live");
  if (!live) return;
  var badge = document.getElementById("live");
  var last = null;
  function refresh() {
    fetch(location.href, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("main");
        var main = document.querySelector("main");
        if (fresh && main) main.replaceWith(fresh);
      });
  }
  function seen(stamp) {
    if (last !== null && stamp !== last) refresh();
    last = stamp;
  }
  if (window.EventSource) {
    var es = new EventSource(live);
    es.onopen = function () { if (badge) badge.classList.add("on"); };
    es.onmessage = function (e) { seen(e.data); };
    es.onerror = function () { if (badge) badge.classList.remove("on"); };
  } else {
    setInterval(function () {
      fetch(live + (live.indexOf("?") < 0 ? "?" : "&") + "once=1")
        .then(function (r) { return r.text(); })
        .then(seen);
    }, 3000);
  }
})();
