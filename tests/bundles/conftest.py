import pytest

URL = "/api/bundles"


@pytest.fixture
def list_bundles(api, learner):
    """GET /api/bundles as a learner of ``org`` with the given query parameters."""

    def call(token: str | None = None, **query):
        return api.get(URL, token=token or learner.token, query=query or None)

    return call
