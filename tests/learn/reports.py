"""Reports of known types that are invalid, each with the one field its error names: read
alone (tests/learn/test_completion.py) and sent over HTTP (test_progress_api.py)."""

INVALID_REPORTS = [
    ({"type": "time", "seconds": 0}, "seconds"),
    ({"type": "time", "seconds": -5}, "seconds"),
    ({"type": "time", "seconds": 86401}, "seconds"),
    ({"type": "time", "seconds": "30"}, "seconds"),
    ({"type": "time", "seconds": True}, "seconds"),
    ({"type": "time"}, "seconds"),
    ({"type": "media", "from": 10, "to": 5, "duration": 60}, "to"),
    ({"type": "media", "from": -1, "to": 5, "duration": 60}, "from"),
    ({"type": "media", "from": 0, "to": 61, "duration": 60}, "to"),
    ({"type": "media", "from": 0, "to": 5, "duration": 0}, "duration"),
    ({"type": "media", "from": 0, "to": 5}, "duration"),
    ({"type": "page", "page": 0, "pages": 10}, "page"),
    ({"type": "page", "page": 11, "pages": 10}, "page"),
    ({"type": "page", "page": 2.5, "pages": 10}, "page"),
    ({"type": "page", "page": "2", "pages": 10}, "page"),
    ({"type": "page", "page": 1, "pages": 0}, "pages"),
    ({"type": "page", "page": 1, "pages": 10_001}, "pages"),
    ({"type": "score", "score": 11, "maxScore": 10}, "score"),
    ({"type": "score", "score": -1, "maxScore": 10}, "score"),
    ({"type": "score", "score": 0, "maxScore": 0}, "maxScore"),
]
