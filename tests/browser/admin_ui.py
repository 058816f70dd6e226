"""Driving the Django admin in a real browser the way a staff member does: by labels, field
names and the messages the admin shows. Tests of every area build on these helpers, e.g.

    ui = admin_as(superuser)
    ui.open_add("bundles", "bundle")
    ui.fill({"org": org.name, "name": "Python basics"})
    ui.save()
    assert ui.messages() == [...]

Field names are the Django form field names (``id_<name>`` in the page); an inline row's
field is addressed by the inline's prefix and row index (``links-0-asset``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.db.models import Model
from django.urls import reverse

EMPTY_CHOICE = "---------"


@dataclass(frozen=True)
class Value:
    """Select an option by its value (e.g. a primary key) instead of its label."""

    value: str


class AdminUI:
    """A Playwright page on the live server's admin."""

    def __init__(self, page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url.rstrip("/")

    # --- navigation ------------------------------------------------------------------------

    def goto(self, path: str):
        response = self.page.goto(self.base_url + path)
        assert response is not None
        return response

    def open_index(self):
        return self.goto(reverse("admin:index"))

    def open_changelist(self, app: str, model: str, query: str = ""):
        url = reverse(f"admin:{app}_{model}_changelist")
        return self.goto(url + (f"?{query}" if query else ""))

    def open_add(self, app: str, model: str):
        return self.goto(reverse(f"admin:{app}_{model}_add"))

    def open_change(self, obj: Model):
        meta = obj._meta
        return self.goto(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk]))

    @property
    def path(self) -> str:
        return re.sub(r"^https?://[^/]+", "", self.page.url)

    # --- signing in --------------------------------------------------------------------------

    def sign_in(self, email: str, password: str) -> None:
        """Through the login form, as a person does."""
        self.goto(reverse("admin:login"))
        self.page.fill("#id_username", email)
        self.page.fill("#id_password", password)
        with self.page.expect_navigation():
            self.page.click("input[type=submit]")

    # --- forms -------------------------------------------------------------------------------

    def field(self, name: str):
        return self.page.locator(f"#content-main form [name='{name}']").first

    def fill(self, fields: dict[str, Any]) -> None:
        """Fill form fields by name: a select by option label (or ``Value(...)``), a checkbox
        by a bool, a JSON field by a dict or list, any other input by its text."""
        for name, value in fields.items():
            self.fill_field(name, value)

    def fill_field(self, name: str, value: Any) -> None:
        element = self.field(name)
        tag = element.evaluate("e => e.tagName.toLowerCase()")
        kind = (element.get_attribute("type") or "").lower()
        if tag == "select":
            if isinstance(value, Value):
                element.select_option(value=value.value)
            elif isinstance(value, Model):
                element.select_option(value=str(value.pk))
            else:
                element.select_option(label=str(value))
        elif kind == "checkbox":
            element.set_checked(bool(value))
        elif isinstance(value, dict | list):
            element.fill(json.dumps(value))
        else:
            element.fill("" if value is None else str(value))

    def fill_actions(self, actions: list[dict], name: str = "actions") -> None:
        """Fill an automation's actions editor as staff do: one row per action ("Add an
        action" for each row the page lacks), its type chosen, then its fields (a course or
        a method by its value, a recipient by its role or "An e-mail address" and the
        address, headers one "Name: value" a line)."""
        rows = self.page.locator(f".lms-actions[data-name='{name}'] li.lms-action")
        for index, action in enumerate(actions):
            while rows.count() <= index:
                self.page.click(f".lms-actions[data-name='{name}'] .lms-action-add")
            kind = action["type"]
            self.fill_field(f"{name}-{index}-type", Value(kind))
            for key, value in action.get("input", {}).items():
                if isinstance(value, dict):
                    value = "\n".join(f"{k}: {v}" for k, v in value.items())
                element = f"{name}-{index}-{kind}-{key}"
                is_select = self.field(element).evaluate("e => e.tagName") == "SELECT"
                if is_select and self.field(f"{element}-address").count():
                    roles = (
                        self.field(element)
                        .locator("option")
                        .evaluate_all("options => options.map(o => o.value)")
                    )
                    if value not in roles:  # an address: chosen, then typed in its box
                        self.fill_field(element, Value("address"))
                        self.fill_field(f"{element}-address", value)
                        continue
                self.fill_field(element, Value(value) if is_select else value)

    def fill_inline(self, prefix: str, index: int, fields: dict[str, Any]) -> None:
        self.fill({f"{prefix}-{index}-{name}": value for name, value in fields.items()})

    def add_inline_row(self, prefix: str) -> int:
        """Clicks the inline's "Add another" link; returns the new row's index."""
        total = self.page.locator(f"#id_{prefix}-TOTAL_FORMS")
        before = int(total.input_value())
        self.page.locator(f"#{prefix}-group .add-row a").click()
        assert int(total.input_value()) == before + 1
        return before

    def _search_autocomplete(self, name: str, search: str):
        """Opens an ``autocomplete_fields`` widget (select2), types ``search`` and waits for
        the admin's answer to that very term to be shown (select2 debounces typing and shows
        the unfiltered list meanwhile). Returns the result options."""
        self.page.locator(f"#id_{name} + .select2 .select2-selection").click()

        def answers_term(response) -> bool:
            query = parse_qs(urlsplit(response.url).query)
            return "/autocomplete/" in response.url and query.get("term") == [search]

        # Typed key by key: select2 ignores a bare input event after a key it handled itself
        # (such as the Escape that closed it before).
        with self.page.expect_response(answers_term):
            field = self.page.locator(".select2-container--open .select2-search__field")
            field.press_sequentially(search)
        self.page.wait_for_function(
            "() => !document.querySelector("
            "'.select2-container--open .select2-results__option.loading-results')"
        )
        return self.page.locator(".select2-container--open .select2-results__option")

    def choose_autocomplete(self, name: str, search: str, option: str | None = None) -> None:
        """Pick from an autocomplete widget: type, then click the result."""
        results = self._search_autocomplete(name, search)
        results.filter(has_text=option or search).first.click()

    def autocomplete_results(self, name: str, search: str) -> list[str]:
        """What an autocomplete widget offers for ``search`` (closes it again)."""
        results = self._search_autocomplete(name, search)
        texts = [text.strip() for text in results.all_inner_texts()]
        self.page.keyboard.press("Escape")
        return [t for t in texts if t and t != "No results found"]

    def select_options(self, name: str) -> list[str]:
        """The labels a select offers, without the empty choice."""
        labels = self.field(name).locator("option").all_inner_texts()
        return [label.strip() for label in labels if label.strip() != EMPTY_CHOICE]

    def follow(self, target) -> None:
        """Click ``target`` (a link or a submit button) and wait for the page it loads: a
        click returns before the navigation starts, so reading the page right after it
        would read the old one."""
        with self.page.expect_navigation():
            target.click()

    def save(self, button: str = "_save") -> None:
        with self.page.expect_navigation():
            self.page.click(f"#content-main form [name='{button}']")

    def save_added(self, button: str = "_save") -> None:
        """Save a new object with ``button``; the admin must say it was added (else the
        form's errors are the failure's message)."""
        self.save(button)
        assert any("was added successfully" in message for message in self.messages()), (
            self.errors()
        )

    # --- what the admin shows ----------------------------------------------------------------

    def messages(self) -> list[str]:
        return [text.strip() for text in self.page.locator("ul.messagelist li").all_inner_texts()]

    def errors(self) -> dict[str, list[str]]:
        """Form errors as {field name or "__all__": [messages]}; inline fields keep their
        prefix (``links-0-asset``)."""
        return self.page.evaluate(
            """() => {
                const out = {};
                for (const list of document.querySelectorAll('#content-main ul.errorlist')) {
                    let name = '__all__';
                    const id = list.id && list.id.match(/^id_(.+)_error$/);
                    if (id) {
                        name = id[1];
                    } else if (!list.classList.contains('nonfield')) {
                        const row = list.closest('[class*="field-"]');
                        const cls = row && [...row.classList].find(c => c.startsWith('field-'));
                        if (cls) name = cls.slice(6);
                    }
                    const items = [...list.querySelectorAll('li')].map(li => li.innerText.trim());
                    out[name] = (out[name] || []).concat(items);
                }
                return out;
            }"""
        )

    def error_note(self) -> str:
        note = self.page.locator("#content .errornote")
        return note.inner_text().strip() if note.count() else ""

    def changelist_rows(self) -> list[str]:
        """The text of each result row of a changelist, one string per row."""
        rows = self.page.locator("#result_list tbody tr").all_inner_texts()
        return [" ".join(row.split()) for row in rows]

    def filter_choices(self, title: str) -> list[str]:
        """The choices of a changelist filter (by its title), without "All"."""
        links = self.page.locator(f"#changelist-filter details[data-filter-title='{title}'] li a")
        return [text.strip() for text in links.all_inner_texts() if text.strip() != "All"]

    def readonly_value(self, name: str) -> str:
        return self.page.locator(f".field-{name} .readonly").first.inner_text().strip()

    def main_text(self) -> str:
        return self.page.locator("#content").inner_text()
