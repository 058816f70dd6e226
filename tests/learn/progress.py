"""Progress reported as a learner's client reports it (POST /api/learn/progress, 4.3), for
the tests of what the reads answer afterwards."""


def report(api, member, activity, *reports) -> dict:
    body = {"activity": str(activity.id), "reports": list(reports)}
    response = api.post("/api/learn/progress", body, token=member.token)
    assert response.status_code == 200, response.content[:500]
    return response.json()


def standing_statements() -> int:
    """What a report's standing (learn.standing.reported) adds to its statements: nothing on
    PostgreSQL, where the progress row's update writes it too, one statement elsewhere."""
    from django.db import connection

    return 0 if connection.vendor == "postgresql" else 1
