(function () {
  "use strict";
  function apply(scope) {
    var results = {}, severities = {};
    scope.querySelectorAll("input[data-filter]").forEach(function (box) {
      (box.dataset.filter === "result" ? results : severities)[box.value] = box.checked;
    });
    document.querySelectorAll(".rule").forEach(function (rule) {
      var show = results[rule.dataset.result] !== false && severities[rule.dataset.severity] !== false;
      rule.classList.toggle("hidden", !show);
    });
    var shown = document.querySelectorAll(".rule:not(.hidden)").length;
    var counter = document.getElementById("shown-count");
    if (counter) { counter.textContent = String(shown); }
  }
  document.querySelectorAll(".filters").forEach(function (scope) {
    scope.addEventListener("change", function () { apply(scope); });
    apply(scope);
  });
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.dataset.target);
      if (source && navigator.clipboard) { navigator.clipboard.writeText(source.textContent); }
      button.textContent = "copied";
    });
  });
})();
