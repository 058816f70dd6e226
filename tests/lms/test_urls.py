"""The API's routes spliced into the root URLconf resolve and reverse as the apps' URLconfs
included under their prefixes would."""

from itertools import combinations

import pytest
from django.urls import NoReverseMatch, Resolver404, URLResolver, get_resolver, include, path
from django.urls.resolvers import RegexPattern

from lms.urls import routes

SECTIONS = [
    ("api/downloads/", "downloads.urls"),
    ("api/learn/", "learn.urls"),
    ("api/bundles", "bundles.urls"),
    ("api/organizations/", "organizations.urls"),
    ("api/automations", "automations.urls"),
    ("api/auth/", "organizations.auth_urls"),
]
ID = "0190c3a2-7b1e-7c3d-9f00-2a5b6c7d8e9f"
PATHS = [
    f"/api/downloads/{ID}/assets",
    f"/api/downloads/{ID}/assets/{ID}",
    "/api/learn/progress",
    "/api/learn/courses",
    "/api/learn/completions",
    f"/api/learn/courses/{ID}",
    f"/api/learn/courses/{ID}/activities",
    f"/api/learn/courses/{ID}/progress",
    f"/api/learn/courses/{ID}/enrollments",
    f"/api/learn/courses/{ID}/enrollments/{ID}",
    "/api/bundles",
    "/api/organizations/members",
    f"/api/organizations/members/{ID}/tokens",
    "/api/organizations/invites",
    f"/api/organizations/invites/{ID}/revoke",
    "/api/organizations/invites/inv_abc/accept",
    "/api/organizations/invites/inv_abc",
    "/api/automations",
    f"/api/automations/{ID}",
    f"/api/automations/{ID}/runs",
    f"/api/automations/{ID}/rotate-secret",
    f"/api/automations/{ID}/test",
    f"/api/automations/{ID}/runs/{ID}/retry",
    "/api/auth/token",
    "/api/automations/not-an-id",  # to the view, which answers 404 after authenticating
]
MISSES = ["/api/automations/x/y", "/api/bundles/", "/api/learn/", "/api/nope", "/api", "/apix"]


def _included() -> URLResolver:
    return URLResolver(
        RegexPattern(r"^/"), [path(prefix, include(module)) for prefix, module in SECTIONS]
    )


def _spliced() -> URLResolver:
    return URLResolver(
        RegexPattern(r"^/"), [route for section in SECTIONS for route in routes(*section)]
    )


@pytest.mark.parametrize("url", PATHS)
def test_a_path_resolves_to_the_same_view_and_arguments(url):
    included, spliced = _included().resolve(url), _spliced().resolve(url)
    assert spliced.func is included.func
    assert (spliced.args, spliced.kwargs) == (included.args, included.kwargs)
    assert spliced.url_name == included.url_name and spliced.route == included.route


@pytest.mark.parametrize("url", MISSES)
def test_a_path_outside_every_route_is_not_found_either_way(url):
    for resolver in (_included(), _spliced()):
        with pytest.raises(Resolver404):
            resolver.resolve(url)


def test_every_route_name_reverses_to_the_same_path():
    included, spliced = _included(), _spliced()
    names = [route.name for section in SECTIONS for route in routes(*section)]
    assert len(names) == len(PATHS) - 1
    for name in names:
        keys = ("downloadId", "assetId", "courseId", "id", "runId", "memberId", "inviteId")
        kwargs = {key: ID for key in keys}
        kwargs["token"] = "inv_abc"
        for subset in _kwarg_subsets(kwargs):
            try:
                expected = included.reverse(name, **subset)
            except NoReverseMatch:
                continue
            assert spliced.reverse(name, **subset) == expected
            break
        else:
            raise AssertionError(f"{name} reversed with none of the arguments")


def _kwarg_subsets(kwargs):
    keys = list(kwargs)
    for size in range(len(keys) + 1):
        for chosen in combinations(keys, size):
            yield {key: kwargs[key] for key in chosen}


def test_the_root_urlconf_holds_the_spliced_routes():
    root = get_resolver()
    for url in PATHS:
        assert root.resolve(url).func is _included().resolve(url).func


def test_only_routes_can_be_spliced(tmp_path, monkeypatch):
    module = tmp_path / "nested_urls.py"
    module.write_text(
        "from django.urls import include, path\n"
        "urlpatterns = [path('x/', include('bundles.urls'))]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError):
        routes("api/", "nested_urls")
