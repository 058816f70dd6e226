from django.apps import AppConfig


class LearnConfig(AppConfig):
    name = "learn"

    def ready(self) -> None:
        from learn import standing
        from learn.services import enroll_invitee
        from lms.events import receiver

        # Accepting an invite with courses enrols its member in them (identity emits the
        # event and knows nothing of enrolment).
        receiver(enroll_invitee)
        # Every enrolment keeps its learner's standing (the roster's) as reports, enrolments
        # and publication change it.
        standing.connect()
