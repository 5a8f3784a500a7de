/* User-space harness of tm_math.h: the tests compile it with gcc and feed it
 * commands on stdin, one per line, to check the kernel-side integer arithmetic
 * against tcpmodels.models. Output: one decimal number per command.
 *   cbrt X                          floor(cbrt(X))
 *   k W_MAX CWND C_Q10 XF_Q16       tm_cubic_k_hz
 *   delta OFFS_HZ C_Q10             tm_cubic_delta_segments
 *   alpha N W1..WN R1..RN           tm_lia_alpha_q16 (R in us)
 *   aiw W_I TOTAL ALPHA_Q16         tm_lia_ai_window
 *   olia N W1..WN R1..RN L1..LN I   tm_olia_incr_q32 for path I (L: bytes between losses)
 *   oliawin CWND CLAMP ACC INCR ACKED  tm_olia_window: the new window and accumulator ("CWND ACC")
 *   xtabset V0..V160                the x(RTT) table (TM_XTAB_LEN values)
 *   xtab RTT_US                     tm_xtab_lookup
 */
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include "tm_math.h"

static tm_u32 xtab[TM_XTAB_LEN];

int main(void)
{
	char cmd[32];
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (scanf("%31s", cmd) == 1) {
		if (!strcmp(cmd, "cbrt")) {
			uint64_t x;
			if (scanf("%" SCNu64, &x) != 1) return 2;
			printf("%" PRIu64 "\n", tm_cbrt_u64(x));
		} else if (!strcmp(cmd, "k")) {
			unsigned a, b, c, d;
			if (scanf("%u %u %u %u", &a, &b, &c, &d) != 4) return 2;
			printf("%u\n", tm_cubic_k_hz(a, b, c, d));
		} else if (!strcmp(cmd, "delta")) {
			uint64_t o; unsigned c;
			if (scanf("%" SCNu64 " %u", &o, &c) != 2) return 2;
			printf("%" PRIu64 "\n", tm_cubic_delta_segments(o, c));
		} else if (!strcmp(cmd, "alpha") || !strcmp(cmd, "olia")) {
			int n, i, which = 0;
			tm_u32 w[TM_MAX_SUBFLOWS] = {0}, r[TM_MAX_SUBFLOWS] = {0};
			tm_u32 l[TM_MAX_SUBFLOWS] = {0};
			if (scanf("%d", &n) != 1 || n < 1 || n > TM_MAX_SUBFLOWS) return 2;
			for (i = 0; i < n; i++) if (scanf("%u", &w[i]) != 1) return 2;
			for (i = 0; i < n; i++) if (scanf("%u", &r[i]) != 1) return 2;
			if (!strcmp(cmd, "alpha")) {
				printf("%u\n", tm_lia_alpha_q16(w, r));
				continue;
			}
			for (i = 0; i < n; i++) if (scanf("%u", &l[i]) != 1) return 2;
			if (scanf("%d", &which) != 1) return 2;
			printf("%lld\n", tm_olia_incr_q32(w, r, l, which));
		} else if (!strcmp(cmd, "oliawin")) {
			unsigned cwnd, clamp, acked;
			long long acc, incr;
			if (scanf("%u %u %lld %lld %u", &cwnd, &clamp, &acc, &incr, &acked) != 5) return 2;
			cwnd = tm_olia_window(cwnd, clamp, &acc, incr, acked);
			printf("%u %lld\n", cwnd, acc);
		} else if (!strcmp(cmd, "aiw")) {
			unsigned a, b, c;
			if (scanf("%u %u %u", &a, &b, &c) != 3) return 2;
			printf("%u\n", tm_lia_ai_window(a, b, c));
		} else if (!strcmp(cmd, "xtabset")) {
			int i;
			for (i = 0; i < TM_XTAB_LEN; i++) if (scanf("%u", &xtab[i]) != 1) return 2;
			printf("ok\n");
		} else if (!strcmp(cmd, "xtab")) {
			unsigned r;
			if (scanf("%u", &r) != 1) return 2;
			printf("%u\n", tm_xtab_lookup(xtab, r));
		} else {
			return 2;
		}
		fflush(stdout);
	}
	return 0;
}
