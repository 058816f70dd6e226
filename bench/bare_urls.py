from django.urls import path

from bench import floors
from lms.views import readyz

urlpatterns = [
    path("readyz", readyz),
    path("bench/ceiling", floors.ceiling),
    path("bench/database", floors.database),
]
