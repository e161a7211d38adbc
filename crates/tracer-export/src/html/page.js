// tracer's HTML handout: keyboard stepping through the numbered messages (j/k or arrows move,
// space steps as `tracer replay` does, enter opens or closes, esc shows all), a clickable
// diagram, a table of contents built here, and every message opened for printing.
(function () {
  "use strict";
  var messages = Array.prototype.slice.call(document.querySelectorAll("details.message"));
  var toc = document.getElementById("toc");
  var current = -1;
  var shown = messages.length;
  messages.forEach(function (message, index) {
    var item = document.createElement("li");
    var link = document.createElement("a");
    link.href = "#" + message.id;
    var summary = message.querySelector("summary").cloneNode(true);
    summary.removeChild(summary.querySelector(".num"));
    link.textContent = summary.textContent.replace(/\s+/g, " ").trim();
    link.addEventListener("click", function () { select(index, true); });
    // The number is the item's own text, inside its column (a list marker hangs into the gap
    // and over the column before).
    var number = document.createElement("span");
    number.className = "n";
    number.textContent = message.dataset.number;
    item.appendChild(number);
    item.appendChild(link);
    toc.appendChild(item);
  });
  function byNumber(prefix, number) { return document.getElementById(prefix + number); }
  function mark(element, name, on) { if (element) { element.classList.toggle(name, on); } }
  function select(index, open) {
    if (index < 0 || index >= shown) { return; }
    if (current >= 0) {
      var before = messages[current];
      mark(before, "current", false);
      mark(byNumber("a", before.dataset.number), "current", false);
      mark(byNumber("b", before.dataset.hop), "current", false);
      mark(toc.children[current], "current", false);
    }
    current = index;
    var message = messages[index];
    mark(message, "current", true);
    mark(byNumber("a", message.dataset.number), "current", true);
    mark(byNumber("b", message.dataset.hop), "current", true);
    mark(toc.children[index], "current", true);
    if (open) { message.open = true; }
    message.scrollIntoView({ block: "nearest" });
  }
  function showUpTo(count) {
    shown = count;
    messages.forEach(function (message, index) {
      var later = index >= count;
      mark(message, "later", later);
      mark(byNumber("a", message.dataset.number), "later", later);
    });
  }
  function step() {
    // The first space (or one after the end) starts stepping after the selected message.
    if (shown === messages.length) {
      showUpTo(current >= 0 && current < messages.length - 1 ? current + 1 : 0);
    }
    if (shown < messages.length) { showUpTo(shown + 1); }
    select(shown - 1, true);
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key;
    if (key === "j" || key === "ArrowDown") { select(current + 1, false); }
    else if (key === "k" || key === "ArrowUp") { select(Math.max(current - 1, 0), false); }
    else if (key === " ") { step(); }
    else if (key === "Enter" && current >= 0) { messages[current].open = !messages[current].open; }
    else if (key === "Escape") { showUpTo(messages.length); }
    else { return; }
    event.preventDefault();
  });
  Array.prototype.forEach.call(document.querySelectorAll("g.arrow"), function (arrow) {
    arrow.addEventListener("click", function () {
      var index = Number(arrow.dataset.number) - 1;
      showUpTo(Math.max(shown, index + 1));
      select(index, true);
    });
  });
  var closed = [];
  window.addEventListener("beforeprint", function () {
    closed = messages.filter(function (message) { return !message.open; });
    closed.forEach(function (message) { message.open = true; });
  });
  window.addEventListener("afterprint", function () {
    closed.forEach(function (message) { message.open = false; });
  });
  // A link to `page.html#m5` opens message 5 and selects it.
  var linked = /^#m(\d+)$/.exec(window.location.hash);
  if (linked) { select(Number(linked[1]) - 1, true); }
  document.body.dataset.ready = "true";
}());
// A request shown as what it adds: its whole body is kept once, cut into shared pieces, in the
// page's JSON blob (each body's list of pieces as an earlier body's start plus its own) and
// joined here the first time it is asked for.
(function () {
  "use strict";
  var blob = document.getElementById("bodies");
  if (!blob) { return; }
  var data = null;
  // A body's pieces: its own list, or the first `keep` of an earlier body's and then its own.
  function piecesOf(index) {
    var body = data.bodies[index];
    if (Array.isArray(body)) { return body; }
    return piecesOf(body.from).slice(0, body.keep).concat(body.then);
  }
  Array.prototype.forEach.call(document.querySelectorAll("button.full-body"), function (button) {
    button.addEventListener("click", function () {
      var pre = button.nextElementSibling;
      if (!pre.hidden) { pre.hidden = true; return; }
      if (!pre.textContent) {
        data = data || JSON.parse(blob.textContent);
        pre.textContent = piecesOf(Number(button.dataset.body))
          .map(function (piece) { return data.pieces[piece]; }).join("");
      }
      pre.hidden = false;
    });
  });
})();
