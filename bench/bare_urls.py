from django.urls import path

from bench import floors

urlpatterns = [
    path("readyz", floors.readyz),
    path("bench/ceiling", floors.ceiling),
    path("bench/floor", floors.floor),
    path("bench/write", floors.write),
]
