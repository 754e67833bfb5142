// Paging for long timelines, and showing the page that holds a linked record. Reads only the
// page's own markup and never writes document text as HTML (textContent and attributes only).
(function () {
  "use strict";
  function setup(pages) {
    var list = Array.prototype.slice.call(pages.children).filter(function (el) { return el.classList.contains("page"); });
    if (list.length < 2) { return; }
    var bar = document.createElement("div");
    bar.className = "pager";
    var prev = button("◀ previous"), next = button("next ▶"), all = button("show all");
    var label = document.createElement("span");
    var name = document.createElement("b");
    name.textContent = pages.getAttribute("data-label") || "";
    var jump = document.createElement("input");
    jump.type = "number"; jump.min = "1"; jump.max = String(list.length); jump.title = "go to page"; jump.placeholder = "page #";
    bar.append(name, prev, label, next, jump, all);
    pages.parentNode.insertBefore(bar, pages);
    var current = 0;
    function show(i) {
      current = Math.max(0, Math.min(list.length - 1, i));
      list.forEach(function (p, j) { p.hidden = j !== current; });
      label.textContent = "page " + (current + 1) + " of " + list.length;
      prev.disabled = current === 0; next.disabled = current === list.length - 1;
    }
    prev.addEventListener("click", function () { show(current - 1); });
    next.addEventListener("click", function () { show(current + 1); });
    jump.addEventListener("change", function () { show(parseInt(jump.value, 10) - 1); });
    all.addEventListener("click", function () {
      list.forEach(function (p) { p.hidden = false; });
      label.textContent = "all " + list.length + " pages";
      prev.disabled = next.disabled = true;
    });
    pages.showPage = show;
    pages.showAll = function () { all.click(); };
    pages.showPageOf = function (el) {
      var page = el.closest(".page");
      if (page && page.hidden) { show(list.indexOf(page)); }
    };
    show(0);
  }
  function button(text) {
    var b = document.createElement("button");
    b.type = "button"; b.textContent = text;
    return b;
  }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) { return; }
    var el = document.getElementById(id);
    if (!el) { return; }
    var pages = el.closest(".pages");
    if (pages && pages.showPageOf) { pages.showPageOf(el); }
    var det = el.closest("details");
    if (det) { det.open = true; }
    el.scrollIntoView({ block: "start" });
  }
  document.querySelectorAll(".pages").forEach(setup);
  window.addEventListener("hashchange", reveal);
  reveal();
  var filter = document.getElementById("row-filter");
  if (filter) {
    filter.addEventListener("change", function () {
      // A chosen outcome shows its rows from every page; "every outcome" goes back to paging.
      var want = filter.value;
      var table = document.querySelector("table.pages[data-label='all files']");
      document.querySelectorAll("tr[data-status]").forEach(function (tr) {
        tr.hidden = want !== "" && tr.getAttribute("data-status") !== want;
      });
      if (table && table.showPage) {
        if (want === "") { table.showPage(0); } else { table.showAll(); }
      }
    });
  }
})();
