"""The API of the live server over real HTTP, as a client calls it: to see what the admin
saved, and for the API tests that go through a real socket."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit


@dataclass
class LiveResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    # As Django's test client answers them, for the checks the API tests share.
    @property
    def status_code(self) -> int:
        return self.status

    @property
    def content(self) -> bytes:
        return self.body

    def __getitem__(self, name: str) -> str:
        return self.headers[name.lower()]


class LiveApi:
    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port

    def request(
        self,
        method: str,
        path: str,
        data: Any = None,
        *,
        token: str | None = None,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> LiveResponse:
        headers = {"Accept": "application/json", **(headers or {})}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        body = None
        if data is not None:
            body = json.dumps(data).encode()
            headers["Content-Type"] = "application/json"
        if query:
            path = f"{path}?{urlencode(query, doseq=True)}"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=15)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return LiveResponse(
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                response.read(),
            )
        finally:
            conn.close()

    def get(self, path: str, **kwargs) -> LiveResponse:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, data: Any = None, **kwargs) -> LiveResponse:
        return self.request("POST", path, data, **kwargs)

    def delete(self, path: str, **kwargs) -> LiveResponse:
        return self.request("DELETE", path, **kwargs)
