"""A mail server that is down, as Django's SMTP backend meets one (connection refused)."""

from django.core.mail.backends.base import BaseEmailBackend


class DownBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        raise ConnectionRefusedError(111, "Connection refused")
