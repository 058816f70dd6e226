"""The automation editor of the admin: the trigger chosen from a list that says what each
does, and the actions as an ordered list of small forms, one per action, whose fields come
from the action type's input schema in ``automations.registry``.

A new action type needs no code here: each of its input fields becomes a one-line text box
with the registry's description as help, unless its name is one this editor knows a better
control for (a course picker for ``courseId``, a "Name: value" box for ``headers``, a text
area for ``body``, a select of the fixed values of ``method`` and of ``to``, whose "an
address" shows an address box) or a label and help for people (``PRESENTATION``).

The editor only builds the list; the registry and the model's validation
(``Automation.clean_fields``/``clean``) judge it, as for the API: each problem is a sentence
for a person (``registry.describe_problem``) whose error keeps its wire path
(``actions.1.input.subject``, ``models.definition_problem``). The form places each problem
beside the input that path names, so every problem shows in one round next to its own
field, and only those fields are outlined; a header line that cannot be read is one more
problem beside the headers, and the rest of the actions are judged all the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.core.exceptions import ValidationError
from django.forms.utils import ErrorList
from django.utils.safestring import mark_safe

from automations import registry
from automations.models import Automation

# Controls for input fields this editor knows better than a one-line text box.
COURSE, HEADERS, TEXT, LINE, CHOICE, RECIPIENT = "course", "headers", "text", "line", "choice", "to"
FIELD_CONTROLS = {
    "courseId": COURSE,
    "headers": HEADERS,
    "body": TEXT,
    "method": CHOICE,
    "to": RECIPIENT,
}
# The fixed values of a select (the registry's own: CONTRACT 7.2), as (value, label).
CHOICES = {"method": [("POST", "POST"), ("PUT", "PUT")]}
# The recipient select: a role, or "an address" with the address in a box of its own.
ADDRESS = "address"
RECIPIENTS = [
    ("learner", "The learner"),
    ("inviter", "The inviter (invite.accepted only)"),
    (ADDRESS, "An e-mail address"),
]
# Labels and help for people, by field name; a field not named here reads its registry name
# and description.
PRESENTATION = {
    "to": (
        "Recipient",
        "The learner (the event's member), the inviter (who sent the invite; invite.accepted "
        "only), or an e-mail address",
    ),
    "subject": ("Subject", "One line, at most 200 characters"),
    "body": ("Body", "Plain text, may be empty"),
    "courseId": ("Course", "A course of the automation's organization"),
    "url": ("URL", "An http or https URL that receives the event as JSON"),
    "method": ("HTTP method", "POST or PUT"),
    "headers": (
        "Headers",
        "One <code>Name: value</code> per line, e.g. <code>Authorization: Bearer …</code>; "
        "credentials are masked on run pages",
    ),
}
# An error of the actions editor that shows beside its input, not above the editor.
PLACED = "placed"
# What send_email's subject and body may say (CONTRACT 7.2; docs/api.md).
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


class ActionErrorList(ErrorList):
    """The form's error lists: the actions editor's list above it leaves out the problems
    shown beside their inputs (``PLACED``), so that a row with none left is not outlined."""

    def get_context(self):
        context = super().get_context()
        shown = [e for e in self.data if not (isinstance(e, ValidationError) and e.code == PLACED)]
        if len(shown) != len(self.data):
            listed = ErrorList(shown, renderer=self.renderer, field_id=self.field_id)
            listed.error_class = self.error_class
            context["errors"] = listed
        return context


class ParsedActions(list):
    """The actions as read from the editor, with the problems of what could not be read
    (a header line without a colon), by wire path: judged with the rest, not instead."""

    problems: dict[str, list[str]]


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
        # Problems to show beside their inputs, by wire path (set by the form).
        self.problems: dict[str, list[str]] = {}

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
                    if control_of(field) == RECIPIENT and data[key] == ADDRESS:
                        values[field.name] = data.get(f"{key}-address", "").strip()
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
                chosen = row.type == spec.name
                value = row.values.get(field.name) if chosen else None
                path = f"actions.{index}.input.{field.name}"
                label, help_text = PRESENTATION.get(field.name, (field.name, field.doc))
                if field.name in PRESENTATION:
                    help_text = mark_safe(help_text)  # this module's own text, with <code>
                fields.append(
                    {
                        "name": f"{name}-{index}-{spec.name}-{field.name}",
                        "id": f"id_{name}-{index}-{spec.name}-{field.name}",
                        "label": label,
                        "required": field.required,
                        "help": help_text,
                        "control": control_of(field),
                        "value": "" if value is None else value,
                        "errors": self.problems.get(path, []) if chosen else [],
                        "placeholders": PLACEHOLDERS
                        if (spec.name, field.name) in PLACEHOLDER_FIELDS
                        else (),
                        **self._choices(field, value),
                    }
                )
            types.append({"name": spec.name, "description": spec.description, "fields": fields})
        known = row.type in registry.ACTION_TYPES
        at = f"actions.{index}"
        return {
            "index": index,
            "prefix": f"{name}-{index}",
            "type": row.type,
            "unknown": row.type if row.type and not known else "",
            "types": types,
            "courses": self.course_choices,
            "type_errors": self.problems.get(f"{at}.type", []),
            "errors": self.problems.get(at, []) + self.problems.get(f"{at}.input", []),
        }

    @staticmethod
    def _choices(field: registry.InputField, value: str | None) -> dict:
        """A select's options, the one chosen, and a value that is none of them (kept, and
        shown as such, for the registry to name)."""
        control = control_of(field)
        if control == RECIPIENT:
            # A new action is to the learner; an empty or other value is an address.
            roles = {role for role, _ in RECIPIENTS if role != ADDRESS}
            choice = "learner" if value is None else value if value in roles else ADDRESS
            address = "" if value is None or value in roles else value
            return {"choices": RECIPIENTS, "choice": choice, "address": address}
        if control == CHOICE:
            choices = CHOICES[field.name]
            known = {option for option, _ in choices}
            choice = value or choices[0][0]
            other = choice if choice not in known else ""
            return {"choices": choices, "choice": choice, "other": other}
        return {}


class ActionsField(forms.Field):
    """The rows as the stored list of ``{type, input}``: an empty optional field is left out
    and a required one is kept empty, for the registry to name."""

    widget = ActionsWidget

    def to_python(self, value):
        if not value:
            return []
        if not isinstance(value[0], ActionRow):
            return value
        actions = ParsedActions()
        actions.problems = {}
        for index, row in enumerate(value):
            spec = registry.ACTION_TYPES.get(row.type)
            data: dict = {}
            for field in spec.fields if spec else ():
                text = row.values.get(field.name, "")
                if text == "" and not field.required:
                    continue
                if control_of(field) == HEADERS:
                    try:
                        data[field.name] = _parse_headers(text)
                    except ValueError as exc:  # left out: the rest is judged all the same
                        actions.problems[f"actions.{index}.input.{field.name}"] = [str(exc)]
                    continue
                data[field.name] = text
            actions.append({"type": row.type, "input": data})
        return actions

    def prepare_value(self, value):
        return value


class CourseConditionField(forms.MultipleChoiceField):
    """``conditions.courseIds`` as a multi-select of courses (CONTRACT 8.7): none chosen is
    every course. Other conditions the automation has (``activityIds``, set over the API)
    are kept by the form."""

    def prepare_value(self, value):
        if isinstance(value, dict):
            value = value.get("courseIds") or []
        return [str(v).lower() for v in value] if isinstance(value, list) else []


class AutomationForm(forms.ModelForm):
    """The trigger and the actions are offered from the registry and judged, like anything
    saved, by the model's validation alone, so each problem is reported once."""

    trigger = forms.CharField(widget=forms.Select())
    actions = ActionsField(
        error_messages={"required": "At least one action is required."},
        help_text="Run in this order when the trigger fires. Each action's fields follow its type.",
    )

    conditions = CourseConditionField(
        label="Courses",
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 6}),
        help_text="Run only for events of these courses (none chosen: every course). "
        "For enrollment.created, activity.completed and course.completed.",
    )

    class Meta:
        model = Automation
        fields = ["org", "name", "description", "trigger", "conditions", "actions", "enabled"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2, "cols": 60})}

    course_choices: list[tuple[str, str]] = []

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("error_class", ActionErrorList)
        super().__init__(*args, **kwargs)
        self.fields["trigger"].widget.choices = [("", "---------")] + [
            (t.name, f"{t.name}: {t.description}") for t in registry.TRIGGERS.values()
        ]
        self.fields["actions"].widget.course_choices = self.course_choices
        self.fields["conditions"].choices = self.course_choices
        # A new automation starts with one e-mail to the learner, to fill in.
        if not self.is_bound and self.instance._state.adding and not self.initial.get("actions"):
            self.initial["actions"] = [
                {"type": "send_email", "input": {"to": "learner", "subject": "", "body": ""}}
            ]

    def clean_conditions(self) -> dict:
        """The chosen courses as ``courseIds``, beside the automation's other conditions;
        the model judges them against the organization and the trigger."""
        kept = self.instance.conditions if isinstance(self.instance.conditions, dict) else {}
        conditions = {key: value for key, value in kept.items() if key != "courseIds"}
        chosen = self.cleaned_data.get("conditions") or []
        if chosen:
            conditions["courseIds"] = list(chosen)
        return conditions

    def clean_actions(self) -> list:
        actions = self.cleaned_data["actions"]
        self._unread = getattr(actions, "problems", {})
        return list(actions)

    def _post_clean(self) -> None:
        """The model judges (``Automation.clean_fields``); then each problem of one action
        (its error's ``params`` name its wire path: ``models.definition_problem``), and each
        header line that could not be read, is placed beside that input or action, in the
        order of the actions."""
        actions = self.cleaned_data.get("actions")  # an error of the model's takes it away
        super()._post_clean()
        if actions is None:
            return
        placed: dict[str, list[str]] = {}
        listed: list[tuple[int, ValidationError]] = []
        for path, messages in getattr(self, "_unread", {}).items():
            for message in messages:
                placed.setdefault(path, []).append(message)
                sentence = registry.describe_problem(path, message, actions)
                listed.append((int(path.split(".")[1]), ValidationError(sentence, code=PLACED)))
        for error in self.errors.as_data().get("actions", []):
            path = (error.params or {}).get("path", "")
            if not path.startswith("actions."):  # the actions as a whole, or the form's own
                listed.append((-1, error))
                continue
            placed.setdefault(path, []).append(error.params["problem"])
            sentence = next(iter(error))
            listed.append((int(path.split(".")[1]), ValidationError(sentence, code=PLACED)))
        if not listed:
            return
        listed.sort(key=lambda item: item[0])
        self._errors.pop("actions", None)
        self.add_error("actions", [error for _, error in listed])
        self.fields["actions"].widget.problems = placed
        self.cleaned_data.pop("actions", None)
