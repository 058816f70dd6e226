// The course outline: "up" and "down" next to a module's or an activity's Position move the
// row and swap the two positions (the server takes swapped positions in one save).
"use strict";
(function () {
  function rowOf(input) {
    return input.closest(".djn-inline-form");
  }

  function siblingRow(row, step) {
    let next = step < 0 ? row.previousElementSibling : row.nextElementSibling;
    while (next && !(next.matches(".djn-inline-form") && next.id && !next.id.endsWith("-empty"))) {
      next = step < 0 ? next.previousElementSibling : next.nextElementSibling;
    }
    return next;
  }

  function positionOf(row) {
    const prefix = row.id + "-seq";
    return row.querySelector(`input[name="${prefix}"]`);
  }

  function move(input, step) {
    const row = rowOf(input);
    const other = row && siblingRow(row, step);
    if (!other) return;
    const theirs = positionOf(other);
    if (!theirs) return;
    [input.value, theirs.value] = [theirs.value, input.value];
    if (step < 0) other.before(row);
    else other.after(row);
  }

  function addButtons(root) {
    for (const input of root.querySelectorAll("input.lms-position")) {
      if (input.name.includes("__prefix__") || input.dataset.lmsMoves || !rowOf(input)) continue;
      input.dataset.lmsMoves = "1";
      const buttons = document.createElement("span");
      buttons.className = "lms-moves";
      for (const [label, step, title] of [["\u2191", -1, "Move up"], ["\u2193", 1, "Move down"]]) {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "lms-move";
        button.textContent = label;
        button.title = title;
        button.addEventListener("click", () => move(input, step));
        buttons.append(button);
      }
      input.after(buttons);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    addButtons(document);
    new MutationObserver((changes) => {
      for (const change of changes) {
        for (const node of change.addedNodes) if (node.nodeType === 1) addButtons(node);
      }
    }).observe(document.body, { childList: true, subtree: true });
  });
})();
