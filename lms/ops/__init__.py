"""What operators read: Prometheus metrics (``metrics``) and the log format (``logs``)."""
