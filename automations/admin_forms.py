"""The automation editor of the admin: the trigger chosen from a list that says what each
does, and the actions as an ordered list of small forms, one per action, whose fields come
from the action type's input schema in ``automations.registry``.

A new action type needs no code here: each of its input fields becomes a one-line text box
with the registry's description as help, unless its name is one this editor knows a better
control for (a course picker for ``courseId``, a "Name: value" box for ``headers``, a text
area for ``body``). The editor only builds the list; the registry and the model's
validation (``Automation.clean_fields``/``clean``) judge it, as for the API.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms

from automations import registry
from automations.models import Automation

# Controls for input fields this editor knows better than a one-line text box.
COURSE, HEADERS, TEXT, LINE = "course", "headers", "text", "line"
FIELD_CONTROLS = {"courseId": COURSE, "headers": HEADERS, "body": TEXT}
# What send_email's subject and body may say (docs/api.md, 7.2 of the contract).
PLACEHOLDERS = (
    "{{ learner.firstName }}",
    "{{ learner.email }}",
    "{{ course.title }}",
    "{{ activity.title }}",
    "{{ org.name }}",
)
PLACEHOLDER_FIELDS = {("send_email", "subject"), ("send_email", "body")}


@dataclass
class ActionRow:
    """One action as the editor shows it: its type and each input field's text."""

    type: str
    values: dict[str, str]


def control_of(field: registry.InputField) -> str:
    return FIELD_CONTROLS.get(field.name, LINE)


def _as_text(value, control: str) -> str:
    if control == HEADERS and isinstance(value, dict):
        return "\n".join(f"{name}: {text}" for name, text in value.items())
    if control == COURSE and isinstance(value, str):
        return value.lower()  # the picker's values are ids as stored: lower-case
    return "" if value is None else str(value)


def rows_of(actions) -> list[ActionRow]:
    """The stored list of ``{type, input}`` as rows for the editor."""
    rows = []
    for action in actions if isinstance(actions, list) else []:
        if not isinstance(action, dict):
            continue
        kind = str(action.get("type") or "")
        data = action.get("input") if isinstance(action.get("input"), dict) else {}
        spec = registry.ACTION_TYPES.get(kind)
        fields = {f.name: control_of(f) for f in spec.fields} if spec else {}
        rows.append(ActionRow(kind, {k: _as_text(v, fields.get(k, LINE)) for k, v in data.items()}))
    return rows


def _parse_headers(text: str) -> dict[str, str]:
    headers = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"{line.strip()!r} is not a header line: write Name: value.")
        headers[name.strip()] = value.strip()
    return headers


class ActionsWidget(forms.Widget):
    """Renders the rows (``actions-<n>-type``, ``actions-<n>-<type>-<field>``, and a hidden
    ``actions-<n>-ORDER`` that the page's buttons renumber) and reads them back."""

    template_name = "automations/admin/actions_widget.html"

    class Media:
        js = ["automations/admin/actions.js"]
        css = {"all": ["automations/admin/actions.css"]}

    def __init__(self, attrs=None):
        super().__init__(attrs)
        self.course_choices: list[tuple[str, str]] = []

    def format_value(self, value):
        if value is None or value == "":
            return []
        if value and isinstance(value[0], ActionRow):
            return value
        return rows_of(value)

    def value_from_datadict(self, data, files, name):
        try:
            total = min(int(data.get(f"{name}-TOTAL_FORMS", 0)), registry.MAX_ACTIONS * 5)
        except ValueError:
            total = 0
        ordered = []
        for index in range(total):
            kind = data.get(f"{name}-{index}-type")
            if kind is None:  # removed on the page
                continue
            spec = registry.ACTION_TYPES.get(kind)
            values = {}
            for field in spec.fields if spec else ():
                key = f"{name}-{index}-{kind}-{field.name}"
                if key in data:
                    values[field.name] = data[key]
            try:
                order = int(data.get(f"{name}-{index}-ORDER", index))
            except ValueError:
                order = index
            ordered.append((order, index, ActionRow(kind, values)))
        return [row for _, _, row in sorted(ordered, key=lambda item: item[:2])]

    def value_omitted_from_data(self, data, files, name):
        return f"{name}-TOTAL_FORMS" not in data

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        rows = self.format_value(value)
        context["widget"].update(
            {
                "rows": [self._row(name, str(i), row) for i, row in enumerate(rows)],
                "blank": self._row(name, "__prefix__", ActionRow("", {})),
                "total": len(rows),
            }
        )
        return context

    def _row(self, name: str, index: str, row: ActionRow) -> dict:
        types = []
        for spec in registry.ACTION_TYPES.values():
            fields = []
            for field in spec.fields:
                value = row.values.get(field.name, "") if row.type == spec.name else ""
                fields.append(
                    {
                        "name": f"{name}-{index}-{spec.name}-{field.name}",
                        "id": f"id_{name}-{index}-{spec.name}-{field.name}",
                        "label": field.name,
                        "required": field.required,
                        "help": field.doc,
                        "control": control_of(field),
                        "value": value,
                        "placeholders": PLACEHOLDERS
                        if (spec.name, field.name) in PLACEHOLDER_FIELDS
                        else (),
                    }
                )
            types.append({"name": spec.name, "description": spec.description, "fields": fields})
        known = row.type in registry.ACTION_TYPES
        return {
            "index": index,
            "prefix": f"{name}-{index}",
            "type": row.type,
            "unknown": row.type if row.type and not known else "",
            "types": types,
            "courses": self.course_choices,
        }


class ActionsField(forms.Field):
    """The rows as the stored list of ``{type, input}``: an empty optional field is left out
    and a required one is kept empty, for the registry to name."""

    widget = ActionsWidget

    def to_python(self, value):
        if not value:
            return []
        if not isinstance(value[0], ActionRow):
            return value
        actions, problems = [], []
        for position, row in enumerate(value, start=1):
            spec = registry.ACTION_TYPES.get(row.type)
            data: dict = {}
            for field in spec.fields if spec else ():
                text = row.values.get(field.name, "")
                if text == "" and not field.required:
                    continue
                if control_of(field) == HEADERS:
                    try:
                        data[field.name] = _parse_headers(text)
                    except ValueError as exc:
                        problems.append(f"Action {position} ({row.type}), input.headers: {exc}")
                    continue
                data[field.name] = text
            actions.append({"type": row.type, "input": data})
        if problems:
            raise forms.ValidationError(problems)
        return actions

    def prepare_value(self, value):
        return value


class AutomationForm(forms.ModelForm):
    """The trigger and the actions are offered from the registry and judged, like anything
    saved, by the model's validation alone, so each problem is reported once."""

    trigger = forms.CharField(widget=forms.Select())
    actions = ActionsField(
        error_messages={"required": "At least one action is required."},
        help_text="Run in this order when the trigger fires. Each action's fields follow its type.",
    )

    class Meta:
        model = Automation
        fields = ["org", "name", "description", "trigger", "actions", "enabled"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2, "cols": 60})}

    course_choices: list[tuple[str, str]] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["trigger"].widget.choices = [("", "---------")] + [
            (t.name, f"{t.name}: {t.description}") for t in registry.TRIGGERS.values()
        ]
        self.fields["actions"].widget.course_choices = self.course_choices
        # A new automation starts with one e-mail to the learner, to fill in.
        if not self.is_bound and self.instance._state.adding and not self.initial.get("actions"):
            self.initial["actions"] = [
                {"type": "send_email", "input": {"to": "learner", "subject": "", "body": ""}}
            ]
