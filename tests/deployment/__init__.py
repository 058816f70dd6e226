"""The service as production runs it: the deploy checks, the production server and its
workers, `make serve`."""
