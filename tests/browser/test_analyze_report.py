"""The ``tcpmodels analyze`` report as its reader sees it: an MPTCP capture and a lossy one, rendered in headless
Chromium at 1400 x 900 and screenshotted (the PNGs stay in the test's temporary folder for a look)."""

from __future__ import annotations

import pytest
from _labtools import REPO

from tcpmodels.analyze.capture import report_folders
from tcpmodels.cli import main

pytestmark = pytest.mark.browser

CAPTURES = REPO / "data" / "captures"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("analysis")
    caps = [CAPTURES / "mptcp_2path.pcapng.gz", CAPTURES / "fit_single-reno-50ms-r0.5-r0-pa.pcap.gz"]
    folders = report_folders(caps, out)
    assert main(["analyze", *map(str, caps), "--output-dir", str(out), "--top", "2"]) == 0
    return {c.name.split(".")[0]: folders[c.resolve()] / "analyze_capture.html" for c in caps}


@pytest.mark.parametrize("name, sections", [
    ("mptcp_2path", ["MPTCP connections", "reinjection"]),
    ("fit_single-reno-50ms-r0", ["Models against the measured rate", "mathis_ratio"]),
])
def test_the_report_reads_as_a_report(reports, chromium_browser, name, sections, tmp_path):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(reports[name].as_uri())
        page.screenshot(path=str(tmp_path / f"{name}_first_screen.png"))
        page.screenshot(path=str(tmp_path / f"{name}_full.png"), full_page=True)
        # the first screen says what the capture holds and where to look
        first = page.evaluate("""() => [...document.querySelectorAll('h2, p, li, strong')]
            .filter(e => e.getBoundingClientRect().top < 900).map(e => e.innerText).join('\\n')""")
        assert "Summary" in first and "Largest flows" in first and "TCP packets" in first
        text = page.inner_text("body")
        # outputs only: the code stays in the notebook
        assert "from tcpmodels import analyze" not in text and "analyze.connection_table" not in text
        for heading in ["Expert Info", "The largest flows", *sections]:
            assert heading in text, heading
        # nothing wider than the page: the tables wrap their headers and are split
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        assert "No MPTCP connection with mapped data" not in text if "mptcp" in name else True
        figures = page.locator("img").count()  # one per flow shown, one per MPTCP connection
        assert figures >= (3 if "mptcp" in name else 1)
    finally:
        page.close()
