"""The cursor of every PostgreSQL connection (``OPTIONS["cursor_factory"]``, lms.settings).

It binds a statement's values on the server: the statement's text holds ``$1``, ``$2``, so
a statement the database refuses is logged without the values it carried (webhook
credentials, signing secrets; PostgreSQL logs a failed statement's parameters only with
``log_parameter_max_length_on_error``, off by default). Django's client-side binding wrote
them into the text.

It prepares nothing unless a statement asks (``prepare=True``: ``lms.db.compiled``'s hot
reads and writes). psycopg would otherwise prepare any statement run five times, and run a
statement whose text a hot read prepared from that prepared plan, so a read planned for its
own values (``PrepareWhenSmall``) would get the generic plan.
"""

from django.db.backends.postgresql.base import ServerBindingCursor


class BindingCursor(ServerBindingCursor):
    def execute(self, query, params=None, *, prepare=False, binary=None):
        return super().execute(query, params, prepare=prepare, binary=binary)
