"""The API guide in a browser: an HTML page whose table of contents leads to each section,
and the Swagger UI's link of an operation lands on that operation's section."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def _in_view(page, selector: str) -> bool:
    return page.eval_on_selector(
        selector,
        "e => { const r = e.getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }",
    )


def test_the_contents_lead_to_each_section(page):
    page.goto("/api/docs/guide")
    assert page.title() == "API guide"
    contents = page.get_by_role("navigation", name="Contents")
    assert contents.get_by_role("link").count() > 25
    assert not _in_view(page, "#send-a-test")
    contents.get_by_role("link", name="Send a test — POST /api/automations/{id}/test").click()
    page.wait_for_url("**/api/docs/guide#send-a-test")
    assert _in_view(page, "#send-a-test")
    # The Markdown is rendered: tables are tables and code blocks are code.
    assert page.locator("main table").count() > 5 and page.locator("main pre code").count() > 20


def test_an_operations_guide_link_in_the_swagger_ui_lands_on_its_section(page):
    page.goto("/api/docs/")
    page.get_by_text("Report usage of an activity; the server decides its status").click()
    guide = page.locator('a[href="/api/docs/guide#report-progress"]').first
    guide.wait_for()
    page.goto(guide.get_attribute("href"))
    assert page.locator("#report-progress").inner_text().startswith("Report progress")
    assert _in_view(page, "#report-progress")
