"""The activity form of the admin: a completion rule is chosen from a list and filled in
with the fields its type takes, never typed as JSON.

The form only presents: it turns its fields into ``settings`` (``completion``, ``duration``,
``pages`` and the other keys, as typed in "Other settings") and the model's ``clean()``
validates the result with ``learn.completion.read_settings``, exactly as for any write.
Each message of that validation is shown next to the field it is about.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django import forms
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from learn import completion
from learn.models import Activity
from learn.serializers import MAX_ENROL as MAX_ENROL_LINES

# How each rule type reads to staff, and when it completes (the rule table of docs/api.md).
RULES: dict[str, tuple[str, str]] = {
    "view": ("Opened", "the activity is opened (the default when none is set)"),
    "time": ("Time spent", "the summed time reaches the minimum time"),
    "media": (
        "Media watched",
        "the watched parts of the audio or video cover the threshold of its duration "
        "(overlaps count once)",
    ),
    "pages": ("Pages viewed", "the distinct pages viewed reach the threshold of its pages"),
    "score": ("Score", "the best score / maximum score reaches the passing score"),
    "reported": ("Reported complete", "the content itself reports that it is complete"),
}

# The form fields each rule type shows: its own keys, and the activity's length it measures.
RULE_FIELDS: dict[str, tuple[str, ...]] = {
    "view": (),
    "time": ("min_seconds",),
    "media": ("threshold", "duration"),
    "pages": ("threshold", "pages"),
    "score": ("passing_score",),
    "reported": (),
}
# form field -> key of the rule; percentages are stored as fractions of 1.
RULE_KEYS = {"min_seconds": "minSeconds", "threshold": "threshold", "passing_score": "passingScore"}
PERCENT_FIELDS = {"threshold", "passing_score"}
# form field -> key of settings (the activity's own length, trusted before reported ones).
LENGTH_KEYS = {"duration": "duration", "pages": "pages"}
MANAGED_KEYS = {"completion", *LENGTH_KEYS.values()}
RULE_INPUTS = (*RULE_KEYS, *LENGTH_KEYS)


def rule_help() -> str:
    rows = format_html_join(
        "",
        "<tr><th>{}</th><td><code>{}</code></td><td>{}</td></tr>",
        (
            (label, json.dumps(_example(kind)), when)
            for kind, (label, when) in RULES.items()
            if kind in completion.RULE_TYPES
        ),
    )
    return format_html(
        '<table class="lms-rule-help"><thead><tr><th>Rule</th><th>Stored as</th>'
        "<th>Completed when</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


def _example(kind: str) -> dict:
    examples = {"minSeconds": 300, "threshold": 0.9, "passingScore": 0.7}
    return {"type": kind, **{RULE_KEYS[f]: examples[RULE_KEYS[f]] for f in _rule_keys(kind)}}


def _rule_keys(kind: str) -> tuple[str, ...]:
    return tuple(name for name in RULE_FIELDS.get(kind, ()) if name in RULE_KEYS)


def _number(value: Decimal) -> int | float:
    """A typed number as JSON wants it: 300, not 300.0."""
    return int(value) if value == value.to_integral_value() else float(value)


def _decimal(value) -> Decimal | None:
    """A stored number as staff typed it: 300, not 300.0; 33.3 as is."""
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, bool) or not isinstance(value, int | float):
        return None
    else:
        number = Decimal(repr(value))
    return Decimal(int(number)) if number == number.to_integral_value() else number


def _shown(value) -> str | None:
    number = _decimal(value)
    return None if number is None else format(number, "f")


def stored_rule(settings) -> dict:
    """The completion rule as stored (``view`` when none is set), for showing it as it is."""
    if isinstance(settings, dict) and isinstance(settings.get("completion"), dict):
        return dict(settings["completion"])
    return {"type": "view"}


def rule_summary(settings) -> str:
    """The rule at a glance: "Score ≥ 70%", "Time spent ≥ 300 s", "Opened"."""
    rule = stored_rule(settings)
    kind = rule.get("type")
    label = RULES.get(kind, (str(kind), ""))[0]
    parts = []
    for name in _rule_keys(kind):
        value = _shown(rule.get(RULE_KEYS[name]))
        if value is None:
            continue
        if name in PERCENT_FIELDS:
            parts.append(f"{format((Decimal(value) * 100).normalize(), 'f')}%")
        else:
            parts.append(f"{value} s")
    return f"{label} ≥ {parts[0]}" if parts else label


class SettingsJSONField(forms.JSONField):
    """Pretty-printed JSON; empty rather than ``null`` when there is nothing."""

    def prepare_value(self, value):
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        if value is None or value == "":
            return ""
        return json.dumps(value, indent=2, ensure_ascii=False, cls=self.encoder)


class PercentField(forms.DecimalField):
    def __init__(self, **kwargs):
        super().__init__(max_digits=7, decimal_places=3, max_value=100, **kwargs)
        self.widget.attrs.update({"min": "0", "step": "any", "class": "lms-number"})

    def validate(self, value):
        super().validate(value)
        if value is not None and value <= 0:
            raise forms.ValidationError("Must be more than 0%.")


def _seconds_field(label: str, help_text: str) -> forms.DecimalField:
    field = forms.DecimalField(
        label=label, required=False, max_digits=12, decimal_places=3, help_text=help_text
    )
    field.widget.attrs.update({"min": "0", "step": "any", "class": "lms-number"})
    return field


class ActivityForm(forms.ModelForm):
    """An activity with its completion rule as fields (inline on the course page, and on the
    activity's own page)."""

    rule_type = forms.ChoiceField(
        label="Completion",
        choices=[(kind, label) for kind, (label, _) in RULES.items()],
        initial="view",
        required=False,
        help_text="",
    )
    min_seconds = _seconds_field("Minimum time (s)", "Seconds of time spent that complete it.")
    threshold = PercentField(
        label="Threshold (%)",
        required=False,
        help_text="Share of the media's duration watched, or of the pages viewed.",
    )
    passing_score = PercentField(
        label="Passing score (%)", required=False, help_text="Best score / maximum score."
    )
    duration = _seconds_field(
        "Duration (s)", "The media's length; else the largest duration reported is used."
    )
    pages = forms.IntegerField(
        label="Pages",
        required=False,
        min_value=1,
        max_value=completion.MAX_PAGES,
        help_text="The document's page count; else the largest count reported is used.",
    )
    settings = SettingsJSONField(
        label="Other settings",
        required=False,
        help_text="Any other keys of the activity's settings, as a JSON object (optional).",
        widget=forms.Textarea(attrs={"rows": 1, "cols": 16, "class": "lms-json-input"}),
    )

    class Meta:
        model = Activity
        fields = ["seq", "title", "published", "settings"]
        labels = {"seq": "Position"}
        widgets = {"title": forms.TextInput(attrs={"size": 20})}

    class Media:
        js = ["learn/admin/completion_rule.js", "learn/admin/outline.js"]
        css = {"all": ["learn/admin/course.css"]}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["rule_type"].help_text = rule_help()
        self.fields["rule_type"].widget.attrs.update(
            {"class": "lms-rule-type", "data-rule-fields": json.dumps(RULE_FIELDS)}
        )
        if "seq" in self.fields:
            self.fields["seq"].label = "Position"
            attrs = self.fields["seq"].widget.attrs
            attrs["class"] = f"{attrs.get('class', '')} lms-position".strip()
        stored = self.instance.settings
        self._had_rule = isinstance(stored, dict) and stored.get("completion") is not None
        if isinstance(stored, dict):
            self.initial.update(self._initial_from(stored))
            others = {k: v for k, v in stored.items() if k not in MANAGED_KEYS}
            self.initial["settings"] = others or None

    @staticmethod
    def _initial_from(stored: dict) -> dict:
        """Initial values of the same types the fields clean to, so that an untouched row
        is not "changed" (and not saved again)."""
        initial: dict = {}
        rule = stored.get("completion")
        if isinstance(rule, dict) and rule.get("type") in RULE_FIELDS:
            initial["rule_type"] = rule["type"]
            for name, key in RULE_KEYS.items():
                value = _decimal(rule.get(key))
                if value is not None:
                    initial[name] = _decimal(value * 100) if name in PERCENT_FIELDS else value
        if (duration := _decimal(stored.get("duration"))) is not None:
            initial["duration"] = duration
        pages = stored.get("pages")
        if isinstance(pages, int) and not isinstance(pages, bool):
            initial["pages"] = pages
        return initial

    def clean(self):
        data = super().clean()
        if "settings" in self.errors:
            return data
        others = data.get("settings")
        kind = data.get("rule_type") or "view"
        clashing = sorted(MANAGED_KEYS & set(others)) if isinstance(others, dict) else []
        if clashing:
            self.add_error(
                "settings", f"Set {', '.join(clashing)} with the fields above, not here."
            )
            return data
        rule: dict = {"type": kind}
        for name in _rule_keys(kind):
            value = data.get(name)
            if value is not None:
                value = value / 100 if name in PERCENT_FIELDS else value
                rule[RULE_KEYS[name]] = _number(value)
        lengths = {
            key: _number(Decimal(data[name]))
            for name, key in LENGTH_KEYS.items()
            if data.get(name) is not None
        }
        # A new activity stores the rule shown; one saved without a rule keeps none until
        # a rule is chosen for it (the default applies all the same).
        explicit = (
            kind != "view"
            or self._had_rule
            or self.instance._state.adding
            or "rule_type" in self.changed_data
        )
        if others is not None and not isinstance(others, dict):
            if explicit or lengths:
                self.add_error(
                    "settings",
                    'Must be a JSON object such as {"level": 2} when a rule or a length is set.',
                )
            return data
        if others is None and not explicit and not lengths:
            data["settings"] = None
            return data
        settings = dict(others or {})
        settings.update(lengths)
        if explicit:
            settings["completion"] = rule
        data["settings"] = settings
        return data

    def _update_errors(self, errors):
        """The model's messages on ``settings`` go next to the field each is about."""
        error_dict = getattr(errors, "error_dict", None)
        for error in (error_dict or {}).pop("settings", []):
            for message in error.messages:
                field, text = _field_of(message)
                if field not in self.fields:
                    field, text = "settings", message
                if field not in self._errors:
                    self.add_error(field, text)
        if error_dict is None or error_dict:
            super()._update_errors(errors)


# The course page's table heads read the labels and help from Meta (a nested inline's rows
# are labelled as for a read-only view).
ActivityForm.Meta.labels = {
    name: field.label for name, field in ActivityForm.base_fields.items() if field.label
} | {"seq": "Position"}
ActivityForm.Meta.help_texts = {
    name: field.help_text
    for name, field in ActivityForm.base_fields.items()
    if field.help_text and name != "rule_type"
} | {"rule_type": "What completes the activity (the table is on the activity's own page)."}


def _field_of(message: str) -> tuple[str, str]:
    """The form field a message of ``read_settings`` is about, and its text without
    the key it names ("completion: minSeconds: Must be..." -> min_seconds, "Must be...")."""
    head, _, rest = message.partition(": ")
    if head == "completion":
        key, _, text = rest.partition(": ")
        for name, rule_key in RULE_KEYS.items():
            if key == rule_key:
                return name, text
        return "rule_type", rest
    for name, length_key in LENGTH_KEYS.items():
        if head == length_key:
            return name, rest
    return "settings", message


class EnrolMembersForm(forms.Form):
    """The course page's "Enrol members" form (CONTRACT 9.7): e-mail addresses, one a line,
    and an optional due date. Blank lines and surrounding spaces are ignored, and an address
    given twice (in any case) counts once."""

    emails = forms.CharField(
        label="E-mail addresses",
        widget=forms.Textarea(attrs={"rows": 8, "cols": 60}),
        help_text=f"One a line, at most {MAX_ENROL_LINES} (members of the course's organization).",
    )
    due_at = forms.DateTimeField(
        label="Due date (UTC)",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Optional: when they should have completed the course. It replaces the due "
        "date of those enrolled already too; left empty, theirs is kept.",
    )

    def clean_emails(self) -> list[str]:
        first: dict[str, str] = {}
        for line in self.cleaned_data["emails"].splitlines():
            if line.strip():
                first.setdefault(line.strip().lower(), line.strip())
        emails = list(first.values())
        if len(emails) > MAX_ENROL_LINES:
            raise forms.ValidationError(f"At most {MAX_ENROL_LINES} addresses at a time.")
        return emails

    def clean_due_at(self):
        due_at = self.cleaned_data["due_at"]
        if due_at is not None and due_at <= timezone.now():
            raise forms.ValidationError("The due date must be in the future.")
        return due_at
