"""Migration operations that only some databases get."""

from django.db import migrations


class RunSQLOn(migrations.RunSQL):
    """``RunSQL`` that runs only on the database ``vendor`` it is written for ("postgresql",
    "sqlite") and is a no-op on any other, forwards and backwards alike."""

    def __init__(self, vendor: str, sql, reverse_sql=None, **kwargs):
        self.vendor = vendor
        super().__init__(sql, reverse_sql, **kwargs)

    def deconstruct(self):
        name, args, kwargs = super().deconstruct()
        return name, args, {"vendor": self.vendor, **kwargs}

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == self.vendor:
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == self.vendor:
            super().database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self):
        return f"Raw SQL operation on {self.vendor} only"
