// The automation's actions editor: shows each action's fields for its type, adds, removes
// and reorders actions. The order sent is that of the hidden ORDER inputs, renumbered here.
"use strict";
(function () {
  function renumber(editor) {
    editor.querySelectorAll(":scope > ol > li.lms-action").forEach((item, position) => {
      item.querySelector(".lms-action-order").value = position;
      item.querySelector(".lms-action-number").textContent = `Action ${position + 1}`;
    });
  }

  function showType(select) {
    const item = select.closest("li.lms-action");
    for (const part of item.querySelectorAll(".lms-action-input")) {
      part.hidden = part.dataset.type !== select.value;
    }
  }

  // "An e-mail address" as the recipient shows the box for it.
  function showAddress(select) {
    const box = select.parentElement.querySelector(".lms-recipient-address");
    box.hidden = select.value !== "address";
    if (!box.hidden) box.focus();
  }

  document.addEventListener("change", (event) => {
    if (event.target.matches("select.lms-action-type")) showType(event.target);
    if (event.target.matches("select.lms-recipient")) showAddress(event.target);
  });

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const editor = button && button.closest(".lms-actions");
    if (!editor) return;
    const list = editor.querySelector(":scope > ol");
    const item = button.closest("li.lms-action");
    if (button.matches(".lms-action-add")) {
      const total = editor.querySelector(".lms-actions-total");
      const html = editor.querySelector("template.lms-action-template").innerHTML;
      list.insertAdjacentHTML("beforeend", html.replaceAll("__prefix__", total.value));
      total.value = Number(total.value) + 1;
      list.lastElementChild.querySelector("select.lms-action-type").focus();
    } else if (button.matches(".lms-action-remove")) {
      item.remove();
    } else if (button.matches(".lms-action-up") && item.previousElementSibling) {
      list.insertBefore(item, item.previousElementSibling);
    } else if (button.matches(".lms-action-down") && item.nextElementSibling) {
      list.insertBefore(item.nextElementSibling, item);
    } else {
      return;
    }
    renumber(editor);
  });

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll(".lms-actions").forEach(renumber);
  });
})();
