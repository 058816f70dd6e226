from django.urls import path

from learn import views

urlpatterns = [
    path("progress", views.ProgressView.as_view(), name="learn-progress"),
    path("courses", views.MyCoursesView.as_view(), name="learn-courses"),
    path("completions", views.CompletionsView.as_view(), name="learn-completions"),
    path("courses/<id:courseId>", views.CourseOutlineView.as_view(), name="learn-course-outline"),
    path(
        "courses/<id:courseId>/activities",
        views.CourseActivitiesView.as_view(),
        name="learn-course-activities",
    ),
    path(
        "courses/<id:courseId>/enrollments",
        views.CourseEnrollmentsView.as_view(),
        name="learn-course-enrollments",
    ),
    path(
        "courses/<id:courseId>/enrollments/<id:memberId>",
        views.CourseEnrollmentView.as_view(),
        name="learn-course-enrollment",
    ),
    path(
        "courses/<id:courseId>/report",
        views.CourseReportView.as_view(),
        name="learn-course-report",
    ),
    path(
        "courses/<id:courseId>/progress",
        views.CourseProgressView.as_view(),
        name="learn-course-progress",
    ),
]
