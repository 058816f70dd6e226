// Shows, next to each completion rule select, only the fields its rule type takes (and the
// activity's duration or pages where they are set). Works on the course page's nested rows,
// rows added later, and the activity's own page. Saving is validated by the server alone.
"use strict";
(function () {
  const LENGTHS = ["duration", "pages"];

  function apply(select) {
    const byType = JSON.parse(select.dataset.ruleFields);
    const prefix = select.name.slice(0, -"rule_type".length);
    const scope = select.closest("tr, fieldset, form") || document;
    const wanted = byType[select.value] || [];
    const all = new Set(Object.values(byType).flat());
    for (const name of all) {
      const input = scope.querySelector(`[name="${prefix}${name}"]`);
      if (!input) continue;
      const holder = input.closest("td, .fieldBox, .form-row") || input;
      const shown = wanted.includes(name) || (LENGTHS.includes(name) && input.value !== "");
      holder.classList.toggle("lms-off", !shown);
    }
  }

  function applyAll(root) {
    for (const select of root.querySelectorAll("select.lms-rule-type")) {
      if (!select.name.includes("__prefix__")) apply(select);
    }
  }

  document.addEventListener("change", (event) => {
    if (event.target.matches && event.target.matches("select.lms-rule-type")) apply(event.target);
  });
  document.addEventListener("DOMContentLoaded", () => {
    applyAll(document);
    // Rows added with "Add another" arrive as new elements.
    new MutationObserver((changes) => {
      for (const change of changes) {
        for (const node of change.addedNodes) {
          if (node.nodeType === 1) applyAll(node);
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  });
})();
