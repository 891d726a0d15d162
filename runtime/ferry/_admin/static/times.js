// Instants in the viewer's own time zone: every <time datetime> the server drew in UTC is
// rewritten as a local date and time with the zone's name; its title keeps the UTC one.
// Without this script the page shows UTC, which is never wrong.
(function () {
  "use strict";
  var format = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
  });
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  var times = document.querySelectorAll("time[datetime]");
  for (var i = 0; i < times.length; i++) {
    var shown = new Date(times[i].getAttribute("datetime"));
    if (isNaN(shown.getTime())) continue;
    times[i].textContent = format.format(shown);
    times[i].setAttribute("data-zone", zone);
  }
})();
