"""A process's memory of what it worked out, bounded.

The hot paths remember answers per process (a read's compiled SQL per shape, a token's
membership, the renderer chosen per Accept header, an organization's size) so that a
request does not work them out again. Keys come from requests, so the memory must not
grow with them: ``BoundedCache`` keeps at most ``limit`` entries, and when a new key
would pass it, drops the oldest half (in insertion order: updating a key keeps its place)
and goes on. A key asked for again after that is worked out again, and remembered anew.

Threads of one process share one cache. ``get`` is one lookup of the dict, which the GIL
makes whole; every change (and the eviction's walk over the keys) runs under the cache's
lock, so no thread walks the dict while another changes it.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from itertools import islice
from typing import Any


class BoundedCache:
    """At most ``limit`` entries; past it, the oldest half goes (see the module's
    docstring)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("A BoundedCache keeps at least one entry.")
        self.limit = limit
        self._entries: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value remembered for ``key``, or ``default``."""
        return self._entries.get(key, default)

    def set(self, key: Hashable, value: Any) -> None:
        """Remembers ``value`` for ``key``, first dropping the oldest half when a new key
        would pass ``limit``."""
        entries = self._entries
        with self._lock:
            if key not in entries and len(entries) >= self.limit:
                kept = self.limit // 2
                for stale in list(islice(entries, len(entries) - kept)):
                    del entries[stale]
            entries[key] = value

    def pop(self, key: Hashable, default: Any = None) -> Any:
        """Forgets ``key``; its value, or ``default`` when none was remembered."""
        with self._lock:
            return self._entries.pop(key, default)

    def clear(self) -> None:
        """Forgets everything."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
