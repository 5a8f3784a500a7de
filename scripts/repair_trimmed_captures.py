"""Restore the original length of every record of the shipped captures trimmed through dpkt (orig_len = caplen).

Run from the repository root: ``python scripts/repair_trimmed_captures.py``. Each capture of
``data/captures/`` that has such records is rewritten in place by
:func:`tcpmodels.traces.trim.repair_original_lengths`, and its provenance JSON gains a
``repaired_original_length`` entry (records, repaired, the commit of this script). Running it
again changes nothing (no record qualifies twice).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from tcpmodels.traces.pcapfile import CaptureFileError
from tcpmodels.traces.trim import repair_original_lengths

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=CAPTURES).stdout.strip()
    for pcap in sorted(CAPTURES.glob("*.pcap.gz")):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / pcap.name
            try:
                counts = repair_original_lengths(pcap, out)
            except CaptureFileError as exc:
                print(f"{pcap.name}: left as it is ({exc})")
                continue
            if not counts["repaired"]:
                print(f"{pcap.name}: nothing to repair ({counts['records']} records)")
                continue
            out.replace(pcap)
        prov_path = CAPTURES / (pcap.name.removesuffix(".pcap.gz") + ".json")
        prov = json.loads(prov_path.read_text())
        prov["repaired_original_length"] = {
            **counts, "by": "scripts/repair_trimmed_captures.py (tcpmodels.traces.trim.repair_original_lengths)",
            "commit": commit, "utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "why": "trimmed through dpkt's pcap writer, which set orig_len = caplen; orig_len restored as link "
                   "header + IP length where that was longer"}
        prov_path.write_text(json.dumps(prov, indent=1) + "\n")
        print(f"{pcap.name}: {counts['repaired']} of {counts['records']} records repaired")


if __name__ == "__main__":
    main()
