"""The page a reader opens without Jupyter: `snakemake --report` on the committed reference data,
loaded in a real headless browser (Debian's chromium). The report's own application must render,
every registered figure must be in it as an image the browser decodes at the size of the committed
PNG (read here from the file's header, not by the browser), and each caption must carry the figure's
registered caption and its reading (what it shows, the verdicts)."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from virtrepro.figures.registry import FIGURES

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.integration

# run in the page once it has loaded: decode every embedded result image and write what came out
# into the page, where --dump-dom shows it (the report keeps its results in `var results`)
PROBE = """<script>
window.addEventListener("load", () => {
  const out = {};
  const entries = Object.entries(results);
  let left = entries.length;
  const done = () => { if (--left === 0) {
    const pre = document.createElement("pre"); pre.id = "virtrepro-check"; pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre); } };
  for (const [path, item] of entries) {
    const img = new Image();
    img.onload = () => { out[path] = {width: img.naturalWidth, height: img.naturalHeight, caption: item.caption}; done(); };
    img.onerror = () => { out[path] = {width: 0, height: 0, caption: item.caption}; done(); };
    img.src = item.data_uri;
  }
});
</script>"""


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    return struct.unpack(">II", head[16:24])


def words(text: str, markup: bool = True) -> str:
    """Text without HTML tags (if ``markup``: "<" in plain text is a less-than) or entities, nor
    Markdown's emphasis and code marks, one space between words."""
    if markup:
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return re.sub(r"\s+", " ", re.sub(r"[*`]", "", text)).strip()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    browser = shutil.which("chromium")
    assert browser, "chromium (Debian package) is missing: the set-up script installs it"
    tmp = tmp_path_factory.mktemp("report")
    page = tmp / "report.html"
    made = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--nolock", "--config",
                           "testbed=reference-vm", "--report", str(page)], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert made.returncode == 0, made.stderr[-3000:]
    text = page.read_text()
    end = text.rfind("</body>")
    probed = tmp / "probed.html"
    probed.write_text(text[:end] + PROBE + text[end:])
    dumped = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=30000",
                             "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=300)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    found = re.search(r'<pre id="virtrepro-check">(.*?)</pre>', dumped.stdout, re.S)
    assert found, "the page did not finish loading its images in the browser"
    shown = re.sub(r"<script.*?</script>|<style.*?</style>", "", dumped.stdout, flags=re.S)
    return json.loads(html.unescape(found.group(1))), words(shown)


def test_making_the_report_leaves_no_empty_variant_directory_in_the_committed_data(report):
    """The report plans the default scale, not the committed data's: a plan that is not executed
    must not create the directories of variants it would measure (common.smk, variant_directory)."""
    empty = [str(d.relative_to(REPO)) for d in (REPO / "data" / "raw").rglob("*") if d.is_dir() and not any(d.iterdir())]
    assert not empty, empty[:5]


def test_the_report_renders_with_one_section_per_paper(report):
    _, shown = report
    assert "Loading Snakemake Report" not in shown or "Results" in shown
    for paper in sorted({fig.paper for fig in FIGURES.values()}):
        assert paper in shown


def test_every_figure_is_an_image_the_browser_decodes_at_its_size(report):
    images, _ = report
    expected = {f"figures/{fig.paper}/{fig.id}.png": fig for fig in FIGURES.values()}
    assert set(images) == set(expected)
    for path, image in images.items():
        assert (image["width"], image["height"]) == png_size(REPO / path), path


def test_each_caption_carries_the_registered_caption_and_the_reading(report):
    images, _ = report
    for fig in FIGURES.values():
        caption = words(images[f"figures/{fig.paper}/{fig.id}.png"]["caption"])
        assert words(fig.caption, markup=False)[:60] in caption, fig.id
        reading = REPO / "figures" / fig.paper / f"{fig.id}.reading.md"
        assert reading.is_file(), reading
        for line in reading.read_text().splitlines():
            if line.startswith("- The paper:"):  # a verdict sentence of the reading, as the reader sees it
                assert words(line[2:], markup=False)[:80] in caption, (fig.id, line)
