// Measures the handout as the browser laid it out (tests/faces/interop_chromium_layout.rs): the
// sequence diagram and its frame, its lanes, which arrow labels meet which number circles, which
// contents items meet each other (an outside list marker counted as the box before its item).
(function () {
  function box(e) { var b = e.getBoundingClientRect(); return { l: b.left, r: b.right, t: b.top, b: b.bottom }; }
  function meets(a, c) { return a.l < c.r && c.l < a.r && a.t < c.b && c.t < a.b; }
  var out = { window: window.innerWidth };
  var svg = document.querySelector("svg.sequence");
  out.svg = box(svg);
  out.figure = box(svg.parentElement);
  out.lanes = Array.prototype.map.call(svg.querySelectorAll(".lane rect"), box);
  var arrows = Array.prototype.slice.call(svg.querySelectorAll("g.arrow"));
  var circles = arrows.map(function (g) { return { n: g.dataset.number, box: box(g.querySelector("circle")) }; });
  out.overlaps = [];
  arrows.forEach(function (g) {
    var label = box(g.querySelector("text.label"));
    circles.forEach(function (c) { if (meets(label, c.box)) { out.overlaps.push([g.dataset.number, c.n]); } });
  });
  var items = Array.prototype.slice.call(document.querySelectorAll("#toc li"));
  var probe = document.createElement("span");
  probe.style.whiteSpace = "pre";
  var rects = items.map(function (li, index) {
    var range = document.createRange(); range.selectNodeContents(li);
    var found = Array.prototype.map.call(range.getClientRects(), function (b) { return { l: b.left, r: b.right, t: b.top, b: b.bottom }; });
    var style = getComputedStyle(li);
    if (style.display === "list-item" && style.listStyleType !== "none" && style.listStylePosition === "outside") {
      // The marker ("N. ") is drawn before the item's first line, ending at its left edge.
      probe.style.font = style.font;
      probe.textContent = (index + 1) + ". ";
      li.appendChild(probe);
      var width = probe.getBoundingClientRect().width;
      li.removeChild(probe);
      var left = li.getClientRects()[0].left;
      found.push({ l: left - width, r: left, t: found[0].t, b: found[0].b });
    }
    return found;
  });
  out.collisions = [];
  for (var i = 0; i < rects.length; i++) { for (var j = i + 1; j < rects.length; j++) {
    if (rects[i].some(function (a) { return rects[j].some(function (c) { return meets(a, c); }); })) { out.collisions.push([i + 1, j + 1]); }
  } }
  var pre = document.createElement("pre"); pre.id = "measured"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
