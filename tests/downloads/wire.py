"""A link's fields on the wire, as the contract names them."""

LINK_FIELDS = set(
    ["orgId", "id", "downloadId", "assetId", "seq", "displayName", "createdAt", "updatedAt"]
)
