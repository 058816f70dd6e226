"""The OpenAPI schema held to what the server does: fuzzed operation by operation, generated
clients, the strings and JSON types each field takes."""
