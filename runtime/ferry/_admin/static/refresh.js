// Auto-refresh for the jobs and dead-letter pages, with a pause the browser remembers.
// The page works without this script: a <noscript> meta tag refreshes it, and the same
// toggle is a plain link to ?refresh=off. With the script, the link becomes a button.
(function () {
  "use strict";
  var seconds = parseInt(document.documentElement.getAttribute("data-refresh") || "0", 10);
  var toggle = document.getElementById("refresh-toggle");
  if (!seconds || !toggle) return;
  var key = "ferry.dashboard.refresh-paused";
  var timer = null;
  function paused() {
    try { return window.localStorage.getItem(key) === "1"; } catch (e) { return false; }
  }
  function remember(value) {
    try { window.localStorage.setItem(key, value ? "1" : "0"); } catch (e) { /* private mode */ }
  }
  function show() {
    toggle.textContent = paused() ? "Resume auto-refresh" : "Pause auto-refresh";
    toggle.setAttribute("aria-pressed", paused() ? "true" : "false");
    toggle.setAttribute("data-paused", paused() ? "1" : "0");
  }
  function arm() {
    window.clearTimeout(timer);
    if (!paused()) timer = window.setTimeout(function () { window.location.reload(); }, seconds * 1000);
  }
  toggle.setAttribute("role", "button");
  toggle.addEventListener("click", function (event) {
    event.preventDefault();
    remember(!paused());
    show();
    arm();
  });
  show();
  arm();
})();
