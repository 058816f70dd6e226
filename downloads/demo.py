"""seed_demo part of this app (see docs/demo.md and lms/demo.py).

Every run leaves the same state, whatever was linked or unlinked since: the first download
holds exactly its three demo assets in order, the second holds none.
"""

from downloads import services
from downloads.models import Asset, Download
from lms.demo import DemoOrg

CDN = "https://cdn.example.com/demo/"
ASSETS = [
    # (name, file name under CDN, content type, size in bytes)
    ("Python cheat sheet", "python-cheat-sheet.pdf", "application/pdf", 482_113),
    ("Setup walkthrough", "setup-walkthrough.mp4", "video/mp4", 73_400_320),
    ("Exercise files", "exercise-files.zip", "application/zip", 2_097_152),
    ("Course workbook", "course-workbook.pdf", "application/pdf", 1_310_720),
    ("Interview with the author", "author-interview.mp3", "audio/mpeg", 18_874_368),
    ("Glossary", "glossary.html", "text/html", 40_960),
]
# The first download's assets, in order; the others stay free for linking to the second.
FIRST_DOWNLOAD_ASSETS = 3
DOWNLOADS = [
    ("Python starter pack", "Everything a new learner needs for the first week.", True),
    ("Bonus material", "Extras to link assets to while trying the API.", False),
]


def seed(demo: DemoOrg) -> None:
    """Adds ``downloads`` (the first with linked assets, the second with none) and
    ``assets`` (every demo asset, none linked to the second download) to the manifest."""
    org = demo.org
    assets = [
        _upsert(Asset, org, name, url=CDN + path, file="", content_type=content_type, size=size)
        for name, path, content_type, size in ASSETS
    ]
    downloads = [
        _upsert(Download, org, name, description=description, published=published)
        for name, description, published in DOWNLOADS
    ]

    first, second = downloads
    wanted = [asset.id for asset in assets[:FIRST_DOWNLOAD_ASSETS]]
    _keep_only(org, first, wanted)
    for asset_id in wanted:
        services.link_asset(org=org, download_id=first.id, asset_id=asset_id)
    names = {asset.id: asset.name for asset in assets[:FIRST_DOWNLOAD_ASSETS]}
    services.arrange_links(org=org, download_id=first.id, order=wanted, display_names=names)
    _keep_only(org, second, [])

    demo.manifest["downloads"] = [str(first.id), str(second.id)]
    demo.manifest["assets"] = [str(asset.id) for asset in assets]


def _upsert(model, org, name: str, **values):
    """The oldest record of ``org`` with this name, updated to ``values``, or a new one."""
    obj = model.objects.for_org(org).filter(name=name).order_by("created_at").first()
    if obj is None:
        return model.objects.create(org=org, name=name, **values)
    for field, value in values.items():
        setattr(obj, field, value)
    obj.save()
    return obj


def _keep_only(org, download: Download, asset_ids: list) -> None:
    for link in list(download.links.for_org(org).exclude(asset_id__in=asset_ids)):
        services.unlink_asset(org=org, download_id=download.id, asset_id=link.asset_id)
