"""Response bodies from output serializers, without rebuilding the serializer per request."""

from __future__ import annotations


class Output:
    """An output serializer built once per process: ``Output(S).one(obj)`` answers what
    ``S(obj).data`` does, and ``.many(objs)`` what ``S(objs, many=True).data`` does, without
    building the serializer's fields again (DRF deep-copies them for every instance, the
    larger part of a small read's serialization). For serializers that only read: no
    context, no validation. Its fields keep no state between calls, so threads share it."""

    def __init__(self, serializer_class) -> None:
        self.serializer = serializer_class()
        self.serializer.fields  # noqa: B018 - built now, not under the first requests' race

    def one(self, instance) -> dict:
        return self.serializer.to_representation(instance)

    def many(self, instances) -> list[dict]:
        represent = self.serializer.to_representation
        return [represent(instance) for instance in instances]
