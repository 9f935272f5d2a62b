// Live updates. Pages read without this script; with it, a page marked
// `data-live` listens to server-sent events (polling when EventSource is
// missing) and, when what it shows has changed, fetches itself again: what
// appears is the page's own rendering, escaped and sanitized as the page is.
// Most pages swap in the fresh <main>. A transcript (`data-follow`) keeps
// the reader's place: it fetches its last turn and those after it only
// (`turns_from`), which are merged (new ones appended, a changed one
// replaced with its folds kept open), the view follows the end only
// when the reader was at the end, and once the session ends ("… ended")
// the page says so and stops listening.
(function () {
  "use strict";
  var live = document.body.getAttribute("data-live");
  if (!live) return;
  var badge = document.getElementById("live");
  var last = null;
  var busy = false;
  var again = false;
  var es = null;
  var timer = null;

  function list(nodes) { return Array.prototype.slice.call(nodes); }

  // Whether two turns show the same thing, whatever the reader unfolded.
  function same(a, b) {
    var c = a.cloneNode(true);
    list(c.querySelectorAll("details[open]")).forEach(function (d) { d.removeAttribute("open"); });
    return c.outerHTML === b.outerHTML;
  }

  function replaceKeepingOpen(a, b) {
    var open = list(a.querySelectorAll("details")).map(function (d) { return d.open; });
    a.replaceWith(b);
    list(b.querySelectorAll("details")).forEach(function (d, i) { if (open[i]) d.open = true; });
  }

  function merge(main, fresh) {
    var root = document.scrollingElement || document.documentElement;
    var atEnd = root.scrollTop + window.innerHeight >= root.scrollHeight - 80;
    var turns = main.querySelector("#turns");
    var next = fresh.querySelector("#turns");
    if (!turns || !next) { main.replaceWith(fresh); return; }
    var sub = main.querySelector("p.sub"), freshSub = fresh.querySelector("p.sub");
    if (sub && freshSub) sub.replaceWith(freshSub);
    var pagers = list(main.querySelectorAll("nav.transcript-pager"));
    var freshPagers = list(fresh.querySelectorAll("nav.transcript-pager"));
    pagers.forEach(function (p) { p.remove(); });
    if (freshPagers.length === 2) {
      turns.before(freshPagers[0]);
      turns.after(freshPagers[1]);
    }
    // The fresh turns start at the page's turn `from`; those before it
    // were not sent again.
    var from = Number(next.getAttribute("data-from")) || 0;
    var olds = list(turns.children), news = list(next.children);
    if (from === 0 && news.length < olds.length) {
      turns.replaceWith(next);
    } else {
      news.forEach(function (n, i) {
        var o = olds[from + i];
        if (!o) turns.appendChild(n);
        else if (!same(o, n)) replaceKeepingOpen(o, n);
      });
    }
    if (atEnd) window.scrollTo(0, root.scrollHeight);
  }

  function refresh(then) {
    if (busy) { again = true; return; }
    busy = true;
    var main = document.querySelector("main");
    var turns = main && main.hasAttribute("data-follow") && main.querySelector("#turns");
    var url = location.href.split("#")[0];
    if (turns && turns.children.length > 1) {
      // From the last turn, or the first whose call waits for its result.
      var kids = list(turns.children), from = kids.length - 1;
      kids.some(function (t, i) { return /<span class="chip">no result</.test(t.innerHTML) && (from = i, true); });
      url += (url.indexOf("?") < 0 ? "?" : "&") + "turns_from=" + from;
    }
    fetch(url, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("main");
        var main = document.querySelector("main");
        if (!fresh || !main) return;
        if (main.hasAttribute("data-follow")) merge(main, fresh);
        else main.replaceWith(fresh);
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (then) then();
        if (again) { again = false; refresh(); }
      });
  }

  function stop() {
    if (es) es.close();
    if (timer) clearInterval(timer);
    if (badge) { badge.classList.remove("on"); badge.textContent = "ended"; }
    document.body.setAttribute("data-live-ended", "");
  }

  function seen(data) {
    var parts = String(data).split(" ");
    var stamp = parts[0], ended = parts[1] === "ended";
    if (ended) { stop(); refresh(); return; }
    // The first stamp is taken after the page was rendered: what changed
    // in between is fetched too.
    if (stamp !== last) refresh();
    last = stamp;
  }

  if (window.EventSource) {
    es = new EventSource(live);
    es.onopen = function () { if (badge) badge.classList.add("on"); };
    es.onmessage = function (e) { seen(e.data); };
    es.onerror = function () { if (badge) badge.classList.remove("on"); };
  } else {
    timer = setInterval(function () {
      fetch(live + (live.indexOf("?") < 0 ? "?" : "&") + "once=1")
        .then(function (r) { return r.text(); })
        .then(seen);
    }, 3000);
  }
})();
