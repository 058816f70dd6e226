"""Progress reported as a learner's client reports it (POST /api/learn/progress, 4.3), for
the tests of what the reads answer afterwards."""


def report(api, member, activity, *reports) -> dict:
    body = {"activity": str(activity.id), "reports": list(reports)}
    response = api.post("/api/learn/progress", body, token=member.token)
    assert response.status_code == 200, response.content[:500]
    return response.json()
