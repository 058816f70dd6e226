"""Role-based permissions. ``request.auth`` is the caller's Membership."""

from rest_framework.permissions import BasePermission

from organizations.models import Membership

Role = Membership.Role


class IsMember(BasePermission):
    """Any authenticated member of an organization (the default for every API view)."""

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, Membership)


class HasRole(IsMember):
    """A member whose role is one of ``roles``. Build one with ``HasRole.of(...)``."""

    roles: frozenset[str] = frozenset()

    @classmethod
    def of(cls, *roles: str) -> type["HasRole"]:
        return type(f"HasRole_{'_'.join(roles)}", (cls,), {"roles": frozenset(roles)})

    def has_permission(self, request, view) -> bool:
        return super().has_permission(request, view) and request.auth.role in self.roles


IsStaffRole = HasRole.of(Role.OWNER, Role.ADMIN, Role.INSTRUCTOR)
IsOrgAdmin = HasRole.of(Role.OWNER, Role.ADMIN)
