"""What the tests and the bench both use to run the service as production does, and part
of neither: not shipped (``pyproject.toml`` packages only the apps and ``lms``)."""
