from rest_framework import serializers


class InviteSerializer(serializers.Serializer):
    """The invite as its holder reads it: who is invited, nothing of the organization."""

    email = serializers.EmailField()
    firstName = serializers.CharField(source="first_name")
    lastName = serializers.CharField(source="last_name")
