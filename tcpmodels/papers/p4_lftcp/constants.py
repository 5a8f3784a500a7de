"""P4's numbers: what the press release prints (with its section), and the standards' facts the analysis uses."""

from __future__ import annotations

CITATION = (
    "University of Tokyo and JST, press release, 11 Dec 2015: "
    "'100ギガビットネットワークを高効率利用するTCP通信技術を確立 — "
    "日米間100ギガビットネットワークを用い73ギガビット/秒のTCP通信を実現' (K. Hiraki et al.)"
)

# --- Facts printed in the press release (section numbers of the release) -------------------
#: Every link of the looped path is 100 Gbit/s ("この経路は全て100ギガビットネットワーク", Sec. 4). [bit/s]
LINK_RATE_BPS = 100e9
#: Round-trip time of the experiment's path ("往復遅延時間は296ミリ秒", Sec. 4). [s]
RTT_S = 0.296
#: Austin-Tokyo round-trip distance ("往復距離は21,153km", Sec. 4). [m]
ROUND_TRIP_DISTANCE_M = 21_153e3
#: Standard TCP's rate and limit on this network ("29ギガビット/秒", Sec. 3 and 4). [bit/s]
STANDARD_TCP_RATE_BPS = 29e9
#: "理論値の97.7%" (Sec. 4): the 29 Gbit/s as a fraction of a theoretical value the text does not give. [-]
STANDARD_TCP_FRACTION_OF_THEORY = 0.977
#: LFTCP's single-stream rate ("73ギガビット/秒", title and Sec. 4). [bit/s]
LFTCP_RATE_BPS = 73e9
#: Data in flight at once is limited to 1 GB in standard TCP ("1ギガバイトに制限", note 2, Fig. 6). [bytes]
IN_FLIGHT_LIMIT_BYTES = 1e9

# --- Printing precision used to judge agreement ---------------------------------------------
#: 29 and 73 Gbit/s are printed as integers: half a unit of the last digit. [bit/s]
RATE_HALF_UNIT_BPS = 0.5e9
#: 97.7 % is printed with one decimal of a percent. [-]
FRACTION_HALF_UNIT = 0.0005

# --- Facts from standards and common practice, used in the candidate explanations -----------
#: Ethernet per-frame overhead on the wire: header 14 + FCS 4 + preamble/SFD 8 + inter-frame gap 12. [bytes]
ETHERNET_OVERHEAD_BYTES = 38
#: IPv4 (20) + TCP (20) + TCP timestamp option (12, RFC 7323, on by default in Linux). [bytes]
IP_TCP_TS_HEADER_BYTES = 52
#: Speed of light in vacuum and a typical group index of single-mode fibre (about 1.468 at 1550 nm).
C_M_PER_S = 299_792_458.0
FIBRE_INDEX = 1.468
