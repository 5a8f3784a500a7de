/* Compiled per-connection analysis of tcpmodels.traces: one ordered pass over the packets, per connection.

   The reference is the numpy/pandas path (tcpmodels/traces/annotation.py, rtt.py, flows.py); this file gives
   the same per-packet columns, RTT samples and per-flow aggregates, tested equal column by column. Each packet
   is handled once, in capture order, by the state of its connection (both directions); what the reference
   decides from the whole capture is handled so:

   - the initial RTT (needed by the duplicate and out-of-order tests of every packet of the connection) is
     known at the handshake's third packet: until then the connection's packets wait in a small queue;
   - an acknowledgment number is unwrapped in the peer's sequence space, anchored at the peer's first sequence
     number: an ACK seen before the peer's first packet is kept in its own space and shifted when it comes;
   - RTT samples wait for the end of the connection for Karn's rule (a later retransmission of the segment's
     bytes, or the latest retransmission by time before the ACK, removes them);
   - the window-scale facts (the SYNs of both directions) and the other rare cases where a later packet changes
     a decision already taken mark the connection: the in-memory analysis runs it again with the final facts
     (``analyze``); a stream (``Stream``) cannot, and counts it.

   Memory per connection: what the reference's results need of it and no more. Candidate segments are
   forgotten once acknowledged; kept to the connection's end are its RTT samples (exact medians need them all),
   its retransmissions (Karn's rule), its distinct timestamp values (an echo may name any) and the holes in its
   sequence space (unique bytes). Duplicates are looked up in one table whose entries expire once no later
   packet can be a copy within the duplicate window. A stream finishes a connection idle past its timeout.

   Untrusted input: every index is bounds-checked; arrays grow by doubling with overflow checks; the suite
   builds this file under AddressSanitizer and UndefinedBehaviorSanitizer and runs the corpora and mutated
   captures through it (tests/traces/test_cflows_sanitizers.py).

   No numpy C API: arrays come in through the buffer protocol, allocated and typed by the Python side
   (tcpmodels/traces/connpass.py, stream.py). Build flags: no fast-math, no FP contraction (the time
   comparisons must round as numpy's do). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NEG_INF (-INFINITY)

/* ------------------------------------------------------------------ growable arrays */

static int grow(void **p, int64_t *cap, int64_t need, size_t elem) {
    if (need <= *cap) return 0;
    int64_t c = *cap ? *cap : 4;
    while (c < need) {
        if (c > (INT64_MAX / 2) / (int64_t)elem) return -1;
        c *= 2;
    }
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

#define PUSH(arr, n, cap, val)                                                  \
    do {                                                                        \
        if (grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))) goto nomem; \
        (arr)[(n)++] = (val);                                                   \
    } while (0)

/* ------------------------------------------------------------------ packets */

enum { B_SYN = 1, B_ACK = 2, B_FIN = 4, B_RST = 8, B_TS = 16 };

typedef struct {
    int64_t row, t, frame;
    uint64_t shi, slo, dhi, dlo;
    uint32_t svp, dvp; /* version << 16 | port */
    uint32_t seq, ack, ipid, payload, tsval, tsecr, sackl, wire;
    uint16_t flags, win;
    uint8_t fb;
    int8_t ws, mpsub;
} Pkt;

/* per-row output bits */
enum {
    O_INIT = 1 << 0, O_RTX = 1 << 1, O_DUP = 1 << 2, O_DUPACK = 1 << 3, O_KA = 1 << 4, O_FAST = 1 << 5,
    O_SPUR = 1 << 6, O_OOO = 1 << 7, O_ZW = 1 << 8, O_ZWP = 1 << 9, O_WU = 1 << 10, O_WF = 1 << 11,
    O_NC = 1 << 12, O_AU = 1 << 13
};

/* ------------------------------------------------------------------ per-flow structures */

typedef struct { int64_t end, seq, t, frame; } Seg;          /* first clean candidate segment ending at end */
typedef struct { int64_t t_seg, t_ack, seq, key, frame; } SeqSample;
typedef struct { int64_t t_seg, t_ack, frame; } TsSample;
typedef struct { int64_t seq, end, t, order; } Rtx;
typedef struct { int64_t v, t; } Point;                       /* ACK (own space, k = 0 basis), time */
typedef struct { int64_t s, e; } Ival;
typedef struct { uint32_t key; uint32_t used; int64_t t, frame; } TsSlot;
typedef struct { uint32_t key; int64_t t; } TsEnt;    /* timestamp value, time of its first packet */

typedef struct {
    int seen, has_row;
    uint32_t first_seq, seq_prev_raw;
    int64_t seq_prev_u;
    /* acknowledgment numbers: unwrapped in the k = 0 basis, shifted by k * 2^32 into the peer's space */
    int has_ack, k_known, acks_before_peer;
    uint32_t ack_first_raw, ack_prev_raw;
    int64_t ack_prev_u0, k;
    /* previous row (any) */
    int64_t prev_win, prev_ack_raw, prev_ack_u, mpc_before_prev, run_len;
    /* running marks */
    int seed_has; int64_t seedmax;       /* highest sequence number (segments occupying sequence space) */
    int reach_has; int64_t reachmax;     /* highest sequence number any packet reached (no duplicates, no probes) */
    double nxt;                          /* Wireshark's nextseq (-inf none) */
    int maxack_has; int64_t maxack_u0;   /* highest acknowledgment sent (non-duplicates) */
    double next_t;                       /* time of the packet that last set nxt (NaN none) */
    /* last non-duplicate packet, as the peer sees it */
    int last_has, last_ackf, last_ka;
    int64_t last_ack_u0, last_t, last_win, last_runlen;
    /* window-scale facts */
    int has_syn; int offered;
    /* ACKed-unseen loop */
    int au_nxt_has, au_mx_has, au_last_has, au_parked; int64_t au_nxt, au_mx, au_last, au_dupn;
    /* aggregates */
    int64_t first_row, packets, first_ns, last_ns, data_packets, payload_bytes, wire_bytes;
    int64_t rtx, rtx_bytes, rtx_data, sent_data, fast, spur, ooo, dup, dupack;
    int64_t ka, zw, zwp, wu, wf, nc, au;
    int syn_seen, fin_seen, rst_seen;
    int last_end_has, span_has, span_fin_has;
    int64_t last_end, span_lo, span_hi, span_fin;
    uint64_t shi, slo, dhi, dlo; uint32_t svp, dvp;
    Ival *iv; int64_t n_iv, cap_iv;
    /* FCT: the peer's ACKs of this flow's data are kept by the ACKing flow (frontier of (ack, time)) */
    Point *fr; int64_t n_fr, cap_fr;
    /* RTT: candidate segments, samples, retransmissions, timestamp values (this flow as the data sender) */
    int adv_has; int64_t adv_max;        /* highest advancing ACK sent by this flow (final basis) */
    /* before the peer's first packet the shift is unknown: the highest ACK for each possible shift
       (-2^32, 0, +2^32) among those that would be >= 0, and whether one would be -1 (the no-ACK sentinel) */
    int pre_has[3]; int64_t pre_max[3]; int pre_minus1[3];
    int prev_ackf;
    Seg *seg; int64_t seg_head, n_seg, cap_seg;
    SeqSample *ss; int64_t n_ss, cap_ss;
    TsSample *ts; int64_t n_ts, cap_ts;
    Rtx *rt; int64_t n_rt, cap_rt;
    TsEnt *tsa; int64_t n_tsa, cap_tsa;  /* values in arrival order, rising (serial arithmetic) */
    TsSlot *tsm; int64_t n_tsm, cap_tsm; /* the others: open addressing, cap a power of two */
} Flow;

typedef struct Conn {
    int64_t id, tuple_idx, tuple_slot, first_frame, tuple_first_frame, last_t;
    uint64_t ihi, ilo; uint32_t ivp;     /* initiator endpoint */
    int pending;                         /* waiting for the initial RTT */
    int dirty, wf_evaluated, au_candidate, live;
    int no_ws;                           /* a SYN without the window-scale option: no scaling either way */
    int synack_seen;                     /* a SYN/ACK of the connection was processed (capture order) */
    int64_t last_synonly_t, mpc, syn_t; int syn_t_has;
    double irtt;
    Pkt *pq; int64_t n_pq, cap_pq;
    int64_t lru_prev, lru_next;
    Flow f[2];
} Conn;

/* ------------------------------------------------------------------ outputs */

typedef struct {
    int64_t tuple_idx, conn, dir, first_row, conn_first_frame, tuple_first_frame;
    int64_t shi, slo, svp, dhi, dlo, dvp;
    int64_t first_ns, last_ns, syn_seen, fin_seen, rst_seen, packets, data_packets, payload_bytes, wire_bytes;
    int64_t unique_bytes, not_captured_bytes, rtx, rtx_bytes, rtx_data, sent_data, fast, spur, ooo, dup, dupack;
    int64_t ka, zw, zwp, wu, wf, nc, au, rtt_n, rtt_ts_n, fct_negative;
    double rtt_min, rtt_median, rtt_mean, rtt_ts_median, fct;
} FlowOut;

typedef struct { int64_t conn, dir, method, frame; double t_ack, rtt; } SampleOut;

/* ------------------------------------------------------------------ duplicate table */

/* Every packet is recorded in a ring in arrival order (the order it expires in) and indexed by an open-
   addressing table of (hash, ring position); a packet seen again replaces its index entry (the reference
   compares a copy with the *previous* packet of the same key). The ring's oldest entries are dropped once no
   later packet can be within their duplicate window. */
typedef struct {
    uint64_t h;
    int64_t flow, t;
    double gap;
    uint32_t ipid, seq, ack, payload, tsval, tsecr, sackl;
    uint16_t flags, win;
} DupEntry;

typedef struct { uint64_t h; int64_t pos; } Slot; /* h == 0: empty */

typedef struct {
    DupEntry *ring; int64_t cap_ring, head, tail;   /* positions head..tail-1 live, index pos & (cap - 1) */
    Slot *slot; int64_t nslot, used;
} DupTable;

/* ------------------------------------------------------------------ tuple table */

typedef struct {
    uint64_t ahi, alo, bhi, blo; uint32_t avp, bvp;
    int64_t idx, conn, last_syn, first_frame; int has_syn;
    int32_t next;
} Tuple;

typedef struct {
    Tuple *e; int64_t n_e, cap_e; int32_t free_head;
    int32_t *bucket; int64_t nb, live; int64_t count;
} TupleTable;

/* ------------------------------------------------------------------ context */

typedef struct {
    int64_t ns0;
    int stream, want_samples, want_rows;
    int64_t idle_ns;
    Conn *c; int64_t n_c, cap_c; int64_t free_c; int64_t lru_head, lru_tail;
    TupleTable tt;
    DupTable dt;
    FlowOut *fo; int64_t n_fo, cap_fo;
    double *scratch; int64_t cap_scratch;   /* RTT values of the flow being emitted */
    SampleOut *so; int64_t n_so, cap_so;
    int64_t negative_rtt, inexact_conns, max_live;
    /* in-memory row outputs */
    int64_t *o_conn, *o_seq, *o_end, *o_ack;
    uint16_t *o_bits;
    int64_t now, since_scan, live;   /* stream: latest time seen [ns], packets since the idle scan, live connections */
} Ctx;

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ULL; x ^= x >> 27; x *= 0x94D049BB133111EBULL; return x ^ (x >> 31);
}

static inline double rel_s(const Ctx *x, int64_t ns) {
    /* numpy: (ns - ns0) / 1e9 with int64 wrapping */
    return (double)(int64_t)((uint64_t)ns - (uint64_t)x->ns0) / 1e9;
}

/* ---- duplicate table */

static int dup_init(DupTable *d) {
    memset(d, 0, sizeof *d);
    d->cap_ring = 1024;
    d->ring = malloc(sizeof(DupEntry) * (size_t)d->cap_ring);
    d->nslot = 2048;
    d->slot = calloc((size_t)d->nslot, sizeof(Slot));
    return d->ring && d->slot ? 0 : -1;
}

static void dup_free(DupTable *d) {
    free(d->ring); free(d->slot);
    memset(d, 0, sizeof *d);
}

static int dup_grow_slots(DupTable *d) {
    int64_t ns = d->nslot * 2;
    Slot *s = calloc((size_t)ns, sizeof(Slot));
    if (!s) return -1;
    for (int64_t i = 0; i < d->nslot; i++) {
        if (!d->slot[i].h) continue;
        uint64_t k = d->slot[i].h & (uint64_t)(ns - 1);
        while (s[k].h) k = (k + 1) & (uint64_t)(ns - 1);
        s[k] = d->slot[i];
    }
    free(d->slot);
    d->slot = s;
    d->nslot = ns;
    return 0;
}

static int dup_grow_ring(DupTable *d) {
    int64_t nc = d->cap_ring * 2;
    DupEntry *r = malloc(sizeof(DupEntry) * (size_t)nc);
    if (!r) return -1;
    for (int64_t q = d->head; q < d->tail; q++) r[q & (nc - 1)] = d->ring[q & (d->cap_ring - 1)];
    free(d->ring);
    d->ring = r;
    d->cap_ring = nc;
    return 0;
}

static void dup_unindex(DupTable *d, uint64_t h, int64_t pos) {
    /* remove the slot pointing at ring position pos (if the key was not seen again since), shifting back */
    uint64_t mask = (uint64_t)(d->nslot - 1), k = h & mask;
    while (d->slot[k].h) {
        if (d->slot[k].pos == pos) break;
        k = (k + 1) & mask;
    }
    if (!d->slot[k].h) return;
    uint64_t hole = k;
    d->slot[hole].h = 0;
    d->used--;
    for (uint64_t j = (hole + 1) & mask; d->slot[j].h; j = (j + 1) & mask) {
        uint64_t home = d->slot[j].h & mask;
        /* move j into the hole when its home is not in (hole, j] cyclically */
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            d->slot[hole] = d->slot[j];
            d->slot[j].h = 0;
            hole = j;
        }
    }
}

static void dup_expire(DupTable *d, double lower_t) {
    while (d->head < d->tail) {
        DupEntry *e = &d->ring[d->head & (d->cap_ring - 1)];
        if (!(lower_t - (double)e->t >= e->gap)) break;
        dup_unindex(d, e->h, d->head);
        d->head++;
    }
}

/* A packet's key for the duplicate test, from the packet alone (its endpoints stand for its flow, which the
   exact comparison checks), so that it can be computed, and its slot fetched, ahead of time. */
static inline uint64_t dup_hash(const Pkt *p) {
    uint64_t h = mix64(p->slo ^ ((uint64_t)p->svp << 40) ^ p->ipid);
    h = mix64(h ^ p->dlo ^ ((uint64_t)p->dvp << 40) ^ p->shi ^ (p->dhi << 1));
    h = mix64(h ^ ((uint64_t)p->seq << 32 | p->ack));
    h = mix64(h ^ ((uint64_t)p->flags << 48 | (uint64_t)p->win << 32 | p->payload));
    h = mix64(h ^ ((uint64_t)p->tsval << 32 | p->tsecr));
    return mix64(h ^ p->sackl) | 1; /* 0 marks an empty slot */
}

static inline void dup_prefetch(const DupTable *d, const Pkt *p) {
    __builtin_prefetch(&d->slot[dup_hash(p) & (uint64_t)(d->nslot - 1)]);
}

/* Time of the previous copy of p in flow `flow` (sets *found, *prev_t), and record p. */
static int dup_check(DupTable *d, int64_t flow, const Pkt *p, double gap, int *found, int64_t *prev_t) {
    uint64_t h = dup_hash(p);
    if (d->tail - d->head == d->cap_ring && dup_grow_ring(d)) return -1;
    if ((d->used + 1) * 2 > d->nslot && dup_grow_slots(d)) return -1;
    int64_t pos = d->tail++;
    DupEntry *n = &d->ring[pos & (d->cap_ring - 1)];
    *n = (DupEntry){h, flow, p->t, gap, p->ipid, p->seq, p->ack, p->payload, p->tsval, p->tsecr, p->sackl,
                    p->flags, p->win};
    uint64_t mask = (uint64_t)(d->nslot - 1), k = h & mask;
    *found = 0;
    while (d->slot[k].h) {
        if (d->slot[k].h == h) {
            DupEntry *e = &d->ring[d->slot[k].pos & (d->cap_ring - 1)];
            if (e->flow == flow && e->ipid == p->ipid && e->seq == p->seq && e->ack == p->ack &&
                e->flags == p->flags && e->win == p->win && e->payload == p->payload && e->tsval == p->tsval &&
                e->tsecr == p->tsecr && e->sackl == p->sackl) {
                *found = 1;
                *prev_t = e->t;
                d->slot[k].pos = pos;
                return 0;
            }
        }
        k = (k + 1) & mask;
    }
    d->slot[k] = (Slot){h, pos};
    d->used++;
    return 0;
}

/* ---- tuple table */

static int tt_init(TupleTable *t) {
    memset(t, 0, sizeof *t);
    t->free_head = -1;
    t->nb = 1024;
    t->bucket = malloc(sizeof(int32_t) * t->nb);
    if (!t->bucket) return -1;
    for (int64_t i = 0; i < t->nb; i++) t->bucket[i] = -1;
    return 0;
}

static void tt_free(TupleTable *t) { free(t->e); free(t->bucket); memset(t, 0, sizeof *t); }

static inline uint64_t tuple_hash(const Tuple *k) {
    uint64_t h = mix64(k->ahi ^ 0x9E3779B97F4A7C15ULL);
    h = mix64(h ^ k->alo);
    h = mix64(h ^ ((uint64_t)k->avp << 32 | k->bvp));
    h = mix64(h ^ k->bhi);
    return mix64(h ^ k->blo);
}

static inline void tuple_key(const Pkt *p, Tuple *key) {
    int a_first = p->shi < p->dhi || (p->shi == p->dhi && (p->slo < p->dlo || (p->slo == p->dlo && p->svp <= p->dvp)));
    if (a_first) {
        key->ahi = p->shi; key->alo = p->slo; key->avp = p->svp; key->bhi = p->dhi; key->blo = p->dlo; key->bvp = p->dvp;
    } else {
        key->ahi = p->dhi; key->alo = p->dlo; key->avp = p->dvp; key->bhi = p->shi; key->blo = p->slo; key->bvp = p->svp;
    }
}

static inline void tt_prefetch(const TupleTable *t, const Pkt *p, int deep) {
    Tuple key;
    tuple_key(p, &key);
    const int32_t *b = &t->bucket[tuple_hash(&key) & (uint64_t)(t->nb - 1)];
    if (!deep) { __builtin_prefetch(b); return; }
    if (*b >= 0) __builtin_prefetch(&t->e[*b]);
}

static int tt_rehash(TupleTable *t) {
    int64_t nb = t->nb * 2;
    if (nb > (1LL << 30)) return 0;
    int32_t *b = malloc(sizeof(int32_t) * nb);
    if (!b) return -1;
    for (int64_t i = 0; i < nb; i++) b[i] = -1;
    for (int64_t i = 0; i < t->nb; i++) {
        int32_t j = t->bucket[i];
        while (j >= 0) {
            int32_t nx = t->e[j].next;
            int64_t k = (int64_t)(tuple_hash(&t->e[j]) & (uint64_t)(nb - 1));
            t->e[j].next = b[k];
            b[k] = j;
            j = nx;
        }
    }
    free(t->bucket);
    t->bucket = b;
    t->nb = nb;
    return 0;
}

/* The tuple of a packet (created if new): its slot, or -1 when out of memory. */
static int64_t tt_get(TupleTable *t, const Pkt *p) {
    Tuple key;
    memset(&key, 0, sizeof key);
    tuple_key(p, &key);
    uint64_t h = tuple_hash(&key);
    int64_t k = (int64_t)(h & (uint64_t)(t->nb - 1));
    for (int32_t j = t->bucket[k]; j >= 0; j = t->e[j].next) {
        Tuple *e = &t->e[j];
        if (e->ahi == key.ahi && e->alo == key.alo && e->avp == key.avp && e->bhi == key.bhi && e->blo == key.blo &&
            e->bvp == key.bvp)
            return j;
    }
    int32_t j;
    if (t->free_head >= 0) {
        j = t->free_head;
        t->free_head = t->e[j].next;
    } else {
        if (t->n_e >= INT32_MAX) return -1;
        if (grow((void **)&t->e, &t->cap_e, t->n_e + 1, sizeof(Tuple))) return -1;
        j = (int32_t)t->n_e++;
    }
    key.idx = t->count++;
    key.first_frame = p->frame;
    key.conn = -1;
    key.last_syn = -1;
    key.has_syn = 0;
    key.next = t->bucket[k];
    t->e[j] = key;
    t->bucket[k] = j;
    t->live++;
    if (t->live > t->nb && tt_rehash(t)) return -1;
    return j;
}

static void tt_remove(TupleTable *t, int64_t slot) {
    Tuple *e = &t->e[slot];
    int64_t k = (int64_t)(tuple_hash(e) & (uint64_t)(t->nb - 1));
    int32_t *pp = &t->bucket[k];
    while (*pp != slot) pp = &t->e[*pp].next;
    *pp = e->next;
    e->next = t->free_head;
    t->free_head = (int32_t)slot;
    t->live--;
}

/* ------------------------------------------------------------------ per-flow helpers */

static void flow_free(Flow *f) {
    free(f->iv); free(f->fr); free(f->seg); free(f->ss); free(f->ts); free(f->rt); free(f->tsm); free(f->tsa);
    f->tsa = NULL;
    f->iv = NULL; f->fr = NULL; f->seg = NULL; f->ss = NULL; f->ts = NULL; f->rt = NULL; f->tsm = NULL;
}

static void flow_reset(Flow *f) {
    flow_free(f);
    memset(f, 0, sizeof *f);
    f->nxt = NEG_INF;
    f->next_t = NAN;
    f->offered = -1;
    f->prev_win = -1;
    f->prev_ack_raw = -1;
}

/* union of [s, e) intervals, kept sorted and disjoint */
static int iv_add(Flow *f, int64_t s, int64_t e) {
    int64_t n = f->n_iv;
    if (n == 0 || s > f->iv[n - 1].e) {
        if (grow((void **)&f->iv, &f->cap_iv, n + 1, sizeof(Ival))) return -1;
        f->iv[n] = (Ival){s, e};
        f->n_iv++;
        return 0;
    }
    if (s >= f->iv[n - 1].s) {
        if (e > f->iv[n - 1].e) f->iv[n - 1].e = e;
        return 0;
    }
    /* first interval whose end reaches s */
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (f->iv[mid].e < s) lo = mid + 1; else hi = mid;
    }
    int64_t j = lo;
    if (j == n || f->iv[j].s > e) { /* no overlap: insert */
        if (grow((void **)&f->iv, &f->cap_iv, n + 1, sizeof(Ival))) return -1;
        memmove(f->iv + j + 1, f->iv + j, sizeof(Ival) * (size_t)(n - j));
        f->iv[j] = (Ival){s, e};
        f->n_iv++;
        return 0;
    }
    int64_t last = j;
    while (last + 1 < n && f->iv[last + 1].s <= e) last++;
    int64_t ns = s < f->iv[j].s ? s : f->iv[j].s;
    int64_t ne = e > f->iv[last].e ? e : f->iv[last].e;
    f->iv[j] = (Ival){ns, ne};
    memmove(f->iv + j + 1, f->iv + last + 1, sizeof(Ival) * (size_t)(n - last - 1));
    f->n_iv -= last - j;
    return 0;
}

/* frontier of (ack, time): for each ack value the earliest time an ACK at least that high was seen */
static int fr_add(Flow *f, int64_t v, int64_t t) {
    int64_t n = f->n_fr;
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (f->fr[mid].v < v) lo = mid + 1; else hi = mid;
    }
    int64_t pos = lo;
    if (pos < n && f->fr[pos].t <= t) return 0; /* dominated */
    int64_t end = pos + (pos < n && f->fr[pos].v == v ? 1 : 0);
    /* points before pos with time >= t are dominated by the new one: a contiguous run ending at pos */
    lo = 0; hi = pos;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (f->fr[mid].t < t) lo = mid + 1; else hi = mid;
    }
    int64_t j = lo;
    int64_t removed = end - j;
    if (removed == 0) {
        if (grow((void **)&f->fr, &f->cap_fr, n + 1, sizeof(Point))) return -1;
        memmove(f->fr + j + 1, f->fr + j, sizeof(Point) * (size_t)(n - j));
        f->n_fr++;
    } else if (removed > 1) {
        memmove(f->fr + j + 1, f->fr + end, sizeof(Point) * (size_t)(n - end));
        f->n_fr -= removed - 1;
    }
    f->fr[j] = (Point){v, t};
    return 0;
}

static void fr_prune(Flow *f, int64_t below) { /* drop points with v < below */
    int64_t j = 0;
    while (j < f->n_fr && f->fr[j].v < below) j++;
    if (j) {
        memmove(f->fr, f->fr + j, sizeof(Point) * (size_t)(f->n_fr - j));
        f->n_fr -= j;
    }
}

static int tsh_put(Flow *f, uint32_t key, int64_t t, int64_t frame) {
    if ((f->n_tsm + 1) * 2 > f->cap_tsm) {
        int64_t nc = f->cap_tsm ? f->cap_tsm * 2 : 16;
        TsSlot *s = calloc((size_t)nc, sizeof(TsSlot));
        if (!s) return -1;
        for (int64_t i = 0; i < f->cap_tsm; i++) {
            if (!f->tsm[i].used) continue;
            uint64_t k = mix64(f->tsm[i].key) & (uint64_t)(nc - 1);
            while (s[k].used) k = (k + 1) & (uint64_t)(nc - 1);
            s[k] = f->tsm[i];
        }
        free(f->tsm);
        f->tsm = s;
        f->cap_tsm = nc;
    }
    uint64_t k = mix64(key) & (uint64_t)(f->cap_tsm - 1);
    while (f->tsm[k].used) {
        if (f->tsm[k].key == key) return 0;
        k = (k + 1) & (uint64_t)(f->cap_tsm - 1);
    }
    f->tsm[k] = (TsSlot){key, 1, t, frame};
    f->n_tsm++;
    return 0;
}

static const TsSlot *tsh_get(const Flow *f, uint32_t key) {
    if (!f->cap_tsm) return NULL;
    uint64_t k = mix64(key) & (uint64_t)(f->cap_tsm - 1);
    while (f->tsm[k].used) {
        if (f->tsm[k].key == key) return &f->tsm[k];
        k = (k + 1) & (uint64_t)(f->cap_tsm - 1);
    }
    return NULL;
}

/* the time of the first packet of f carrying timestamp value key; returns 0 if none */
static int ts_get(const Flow *f, uint32_t key, int64_t *t) {
    int64_t n = f->n_tsa;
    if (n) {
        uint32_t first = f->tsa[0].key, off = key - first;
        if (off <= (uint32_t)(f->tsa[n - 1].key - first)) {
            int64_t lo = 0, hi = n;
            if (n > 4 && off >= (uint32_t)(f->tsa[n - 4].key - first)) lo = n - 4; /* echoes are recent */
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if ((uint32_t)(f->tsa[mid].key - first) < off) lo = mid + 1; else hi = mid;
            }
            if (lo < n && f->tsa[lo].key == key) { *t = f->tsa[lo].t; return 1; }
        }
    }
    const TsSlot *s = tsh_get(f, key);
    if (s) { *t = s->t; return 1; }
    return 0;
}

static int ts_put(Flow *f, uint32_t key, int64_t t, int64_t frame) {
    int64_t n = f->n_tsa;
    if (n) {
        uint32_t first = f->tsa[0].key, last = f->tsa[n - 1].key;
        if (key == last) return 0;
        uint32_t off = key - first;
        if (!(off > (uint32_t)(last - first) && off < 0x80000000u)) {
            int64_t dummy;
            if (ts_get(f, key, &dummy)) return 0; /* the first packet with this value stays */
            return tsh_put(f, key, t, frame);
        }
    }
    if (grow((void **)&f->tsa, &f->cap_tsa, n + 1, sizeof(TsEnt))) return -1;
    f->tsa[n] = (TsEnt){key, t};
    f->n_tsa++;
    return 0;
}

/* ------------------------------------------------------------------ the per-packet step */

static inline int64_t k_of(const Flow *f) { return f->k_known ? f->k : 0; }

#define TWO32 4294967296LL

static void set_k(Conn *c, Flow *f, const Flow *peer) {
    /* shift of f's acknowledgment numbers into the peer's space (annotation._unwrap_acks) */
    int64_t anchor = peer->first_seq, first = f->ack_first_raw;
    int64_t shift = (int64_t)(int32_t)(uint32_t)(first - anchor) + anchor - first;
    f->k = shift;
    f->k_known = 1;
    if (f->acks_before_peer) {
        /* the ACKs seen so far were kept in their own space: move what depends on the shift */
        int j = shift < 0 ? 0 : shift == 0 ? 1 : 2;
        f->adv_has = f->pre_has[j];
        f->adv_max = f->pre_max[j] + shift;
        if (f->prev_ackf) f->prev_ack_u += shift;
        if (f->pre_minus1[j]) c->dirty = 1; /* an ACK number equal to the sentinel: only a re-run is exact */
    }
}

static int process(Ctx *x, Conn *c, int d, const Pkt *p) {
    Flow *F = &c->f[d], *P = &c->f[1 - d];
    const int syn = (p->fb & B_SYN) != 0, ackf = (p->fb & B_ACK) != 0, fin = (p->fb & B_FIN) != 0,
              rst = (p->fb & B_RST) != 0, has_ts = (p->fb & B_TS) != 0;
    const int64_t payload = p->payload, t = p->t, win = p->win, ack_raw = p->ack;
    const double td = (double)t;
    /* sequence numbers */
    int64_t seq_u;
    if (!F->seen) {
        F->seen = 1;
        F->first_seq = p->seq;
        seq_u = p->seq;
        F->first_row = p->row;
        F->first_ns = F->last_ns = t;
        F->shi = p->shi; F->slo = p->slo; F->svp = p->svp; F->dhi = p->dhi; F->dlo = p->dlo; F->dvp = p->dvp;
        if (P->has_ack && !P->k_known) set_k(c, P, F);
    } else {
        seq_u = F->seq_prev_u + (int64_t)(int32_t)(uint32_t)(p->seq - F->seq_prev_raw);
    }
    F->seq_prev_u = seq_u;
    F->seq_prev_raw = p->seq;
    const int64_t seq_end = seq_u + payload + syn + fin;
    /* acknowledgment number, in the k = 0 basis (u0) and in the peer's space (ack_u) */
    int64_t u0 = 0, ack_u = -1;
    if (ackf) {
        if (!F->has_ack) {
            F->has_ack = 1;
            F->ack_first_raw = p->ack;
            u0 = p->ack;
            if (P->seen) { if (!F->k_known) set_k(c, F, P); }
            else F->acks_before_peer = 1;
        } else {
            u0 = F->ack_prev_u0 + (int64_t)(int32_t)(uint32_t)(p->ack - F->ack_prev_raw);
        }
        F->ack_prev_u0 = u0;
        F->ack_prev_raw = p->ack;
        ack_u = u0 + k_of(F);
    }
    /* duplicates */
    const double irtt = c->irtt;
    const double gap = isnan(irtt) ? 1e6 : 0.5 * irtt;
    int found = 0;
    int64_t prev_t = 0;
    if (dup_check(&x->dt, c->id * 2 + d, p, gap, &found, &prev_t)) return -1;
    const int dup = found && (td - (double)prev_t < gap);
    const int occupies = payload > 0 || syn || fin;
    const double hmax = F->seed_has ? (double)F->seedmax : NEG_INF;
    const int has_prev = hmax > NEG_INF;
    /* the peer's last packet */
    const int hit = P->last_has;
    const int64_t peer_ack = hit && P->last_ackf ? P->last_ack_u0 + k_of(P) : -1;
    const double peer_t = hit ? (double)P->last_t : NAN;
    const int64_t peer_win = hit ? P->last_win : -1;
    const double peer_next = hit && P->reach_has ? (double)P->reachmax : -1.0;
    const double peer_maxack = hit && P->maxack_has ? (double)(P->maxack_u0 + k_of(P)) : -1.0;
    const double sq = (double)seq_u;
    const int peer_acked = peer_maxack >= 0 ? peer_maxack > sq : 1;
    /* a zero-window probe is at the mark and, as in Wireshark, does not move it (so is a probe sent again) */
    const int zwp = payload == 1 && peer_win == 0 && has_prev && sq == hmax && !syn && !fin && !rst && !dup;
    const int seed = !dup && occupies && !zwp;
    const double nxt = F->nxt;
    /* Wireshark's nextseq 0 (raw) is "not set": no retransmission (spurious apart) or previous segment not captured
       against it, and the next packet taking part sets it whatever its end, the retransmission mark anew too
       (annotation._wireshark_nextseq) */
    const int nxt_unset = nxt > NEG_INF && (((int64_t)nxt) & 0xffffffffLL) == 0;
    const int zero_restart = nxt_unset && !dup && !zwp;
    /* keep-alive: one below the next sequence number; before any packet set it, that is 0 - 1, raw 2^32 - 1
       (4.0.17: nextseq - 1 == seq, no "nextseq &&" guard) */
    const int ka = payload <= 1 && !syn && !fin && !rst &&
                   (nxt > NEG_INF ? sq == nxt - 1 : (seq_u & 0xffffffffLL) == 0xffffffffLL) && peer_acked && !zwp;
    /* a SYN sent again before any SYN/ACK of the connection: Wireshark's next sequence number anew, after its tests
       (annotation._syn_restarts) */
    const int restart = syn && !ackf && !dup && !c->synack_seen;
    if (syn && ackf) c->synack_seen = 1;
    /* never a retransmission: more than one byte from one below the next sequence number (Wireshark 4.0.17) */
    const int after_probe_like = payload > 1 && sq == hmax - 1;
    /* spurious (Wireshark 4's first test, on its own): payload the peer's last ACK covers, its end without FIN;
       a first copy whose original the capture missed, a zero-window probe, data from one below the mark too */
    const int spur = payload > 0 && peer_ack > 0 && (peer_ack & 0xffffffffLL) != 0 && seq_u + payload <= peer_ack &&
                     !dup && !ka;                 /* the peer's ACK 0 (raw) is "not set" */
    const int rtx = (occupies && has_prev && sq < hmax && !dup && !ka && !zwp && !after_probe_like && !nxt_unset) || spur;
    const int ctl = syn || fin || rst;
    const int64_t prev_win = F->has_row ? F->prev_win : -1, prev_ack = F->has_row ? F->prev_ack_raw : -1;
    const int mpc_signal = F->has_row && (c->mpc - F->mpc_before_prev) > 0;
    const int after_ka = hit && P->last_ka;
    const int dupack = payload == 0 && !ctl && win != 0 && win == prev_win && sq == nxt && ack_raw == prev_ack &&
                       !dup && !after_ka && !mpc_signal;
    /* Wireshark's dupacknum of this flow */
    const int run_break = !F->has_row || ack_u != F->prev_ack_u;
    const int64_t run_len = run_break ? dupack : F->run_len + dupack;
    /* ACKed unseen segment (annotation._acked_unseen) */
    int au = 0;
    if (!dup) {
        if (dupack) F->au_dupn = F->au_dupn == -1 ? 1 : F->au_dupn + 1;
        if (!F->au_last_has || ack_raw != F->au_last) { F->au_dupn = 0; F->au_parked = 0; }
        if (ackf && P->au_mx_has && ack_u > P->au_mx) {
            if (P->au_mx < P->au_nxt) {          /* over a hole in the peer's segments: the mark moves on */
                au = 1;
                P->au_mx = P->au_nxt;
            } else {                             /* beyond everything seen: once until the counter re-arms */
                if (P->au_dupn == 0) au = 1;
                P->au_dupn = -1;
                P->au_parked = 1;
            }
        }
        if (restart) {                           /* next sequence number and mark anew */
            F->au_nxt = F->au_mx = seq_end;
            F->au_nxt_has = F->au_mx_has = (seq_end & 0xffffffffLL) != 0;
        } else if (!zwp) {
            /* sequence number 0 (raw) is Wireshark's "not set" */
            if (!F->au_nxt_has || seq_end > F->au_nxt) { F->au_nxt = seq_end; F->au_nxt_has = (seq_end & 0xffffffffLL) != 0; }
            if (!F->au_mx_has || seq_u == F->au_mx) { F->au_mx = F->au_nxt; F->au_mx_has = F->au_nxt_has; }
        }
        F->au_last = ack_raw;
        F->au_last_has = 1;
    }
    /* retransmission classes; the peer's counter as Wireshark reads it where the ACKed-unseen test parked it
       since the peer's acknowledgment number last changed (-1 is at least 2 as its guint32) */
    const int64_t dupacks = P->au_parked ? (P->au_dupn == -1 ? ((int64_t)1 << 31) : P->au_dupn)
                                         : (hit ? P->last_runlen : 0);
    /* Wireshark 4's order: spurious (above) first, then fast, then out of order */
    const int fast = rtx && !spur && dupacks >= 2 && peer_ack == seq_u && (td - peer_t < 20e6);
    const double ooo_win = isnan(irtt) ? 3000000.0 : irtt;
    /* out of order: soon after the packet that set Wireshark's next sequence number, not ending there */
    const int ooo = rtx && !spur && !fast && (td - F->next_t < ooo_win) && nxt != (double)seq_end;
    /* window-scale facts (the reference uses the final ones: a change after a decision marks the connection) */
    if (syn) {
        int changed = 0;
        if (!F->has_syn) { F->has_syn = 1; changed = 1; }
        if (p->ws > F->offered) { F->offered = p->ws; changed = 1; }
        if (p->ws < 0 && !c->no_ws) { c->no_ws = 1; changed = 1; }
        if (changed && c->wf_evaluated) c->dirty = 1;
    }
    /* Expert Info */
    const int zw = win == 0 && !ctl && !dup;
    const int wu = payload == 0 && win != 0 && prev_win >= 0 && win != prev_win && sq == nxt && ack_raw == prev_ack &&
                   !ctl && !dup;
    int wf = 0;
    if (payload > 0 && !ctl && !dup && peer_ack >= 0 && peer_win >= 0) {
        c->wf_evaluated = 1;
        /* the peer's scale as Wireshark 4.0.17 knows it (annotation._expert): 0 after any SYN without the option,
           else what the peer's SYN offered, else unknown (no test) */
        if (c->no_ws || P->offered >= 0) {
            int sh = c->no_ws ? 0 : (P->offered < 14 ? P->offered : 14);
            double bytes = (double)peer_win * (double)(1 << sh); /* 2^sh exactly (sh <= 14) */
            wf = (double)(seq_u + payload) == (double)peer_ack + bytes;
        }
    }
    const int nc = nxt > NEG_INF && sq > nxt && !rst && !dup && !nxt_unset;
    const int beyond = ackf && !dup && peer_next >= 0 && (double)ack_u > peer_next;
    const int extends = sq < nxt && (double)seq_end > nxt && !dup;
    if (nc || beyond || extends || restart || zero_restart) c->au_candidate = 1;
    /* state after the row */
    /* Wireshark's nextseq: every packet but a zero-window probe (and our duplicates) that ends beyond it, pure ACKs
       and RSTs without payload included (a RST that ran ahead moves it; annotation._wireshark_nextseq) */
    if (restart || zero_restart) { F->nxt = (double)seq_end; F->next_t = td; }
    else if (!dup && !zwp && (double)seq_end > F->nxt) { F->nxt = (double)seq_end; F->next_t = td; }
    if (zero_restart) F->seed_has = 0;
    if (seed && (!F->seed_has || seq_end > F->seedmax)) { F->seedmax = seq_end; F->seed_has = 1; }
    if (!dup && !zwp && (!F->reach_has || seq_end > F->reachmax)) { F->reachmax = seq_end; F->reach_has = 1; }
    if (ackf && !dup && (!F->maxack_has || u0 > F->maxack_u0)) { F->maxack_u0 = u0; F->maxack_has = 1; }
    F->has_row = 1;
    F->prev_win = win;
    F->prev_ack_raw = ack_raw;
    F->prev_ack_u = ack_u;
    F->prev_ackf = ackf;
    F->run_len = run_len;
    F->mpc_before_prev = c->mpc;
    if (p->mpsub == 0) c->mpc++;
    if (!dup) {
        F->last_has = 1;
        F->last_ackf = ackf;
        F->last_ack_u0 = u0;
        F->last_t = t;
        F->last_win = win;
        F->last_runlen = run_len;
        F->last_ka = ka;
    }
    /* aggregates */
    F->packets++;
    if (t < F->first_ns) F->first_ns = t;
    if (t > F->last_ns) F->last_ns = t;
    F->syn_seen |= syn; F->fin_seen |= fin; F->rst_seen |= rst;
    if (payload > 0) {
        F->data_packets++;
        if (!F->last_end_has || seq_u + payload > F->last_end) { F->last_end = seq_u + payload; F->last_end_has = 1; }
        if (!dup) { F->sent_data++; if (iv_add(F, seq_u, seq_u + payload)) return -1; }
        if (rtx) F->rtx_data++;
    }
    F->payload_bytes += payload;
    F->wire_bytes += p->wire;
    if (rtx) { F->rtx++; F->rtx_bytes += payload; }
    F->fast += fast; F->spur += spur; F->ooo += ooo; F->dup += dup; F->dupack += dupack;
    F->ka += ka; F->zw += zw; F->zwp += zwp; F->wu += wu; F->wf += wf; F->nc += nc; F->au += au;
    if (!rst && !dup && !ka) {
        int64_t lo = seq_u + syn, hi = seq_u + payload;
        if (!F->span_has) { F->span_lo = lo; F->span_hi = hi; F->span_has = 1; }
        else { if (lo < F->span_lo) F->span_lo = lo; if (hi > F->span_hi) F->span_hi = hi; }
        if (fin && (!F->span_fin_has || hi < F->span_fin)) { F->span_fin = hi; F->span_fin_has = 1; }
    }
    if (syn && d == 0 && (!c->syn_t_has || t < c->syn_t)) { c->syn_t = t; c->syn_t_has = 1; }
    /* FCT: this flow's ACKs of the peer's data */
    if (ackf) {
        if (fr_add(F, u0, t)) return -1;
        if (F->k_known && P->last_end_has) fr_prune(F, P->last_end - F->k);
    }
    /* RTT: this flow as the data sender */
    if (rtx) {
        Rtx r = {seq_u, seq_end, t, F->n_rt};
        PUSH(F->rt, F->n_rt, F->cap_rt, r);
    }
    if (occupies && !dup && !rtx) {
        int ok = !(P->adv_has && seq_end <= P->adv_max);
        int64_t n = F->n_seg;
        if (ok && (n == F->seg_head || seq_end > F->seg[n - 1].end)) {
            Seg s = {seq_end, seq_u, t, p->frame};
            if (F->seg_head > 0 && F->seg_head == n) { F->seg_head = 0; F->n_seg = 0; }
            PUSH(F->seg, F->n_seg, F->cap_seg, s);
        } else if (ok && seq_end < F->seg[n - 1].end) {
            /* not expected (a new segment ends at or beyond every earlier one); kept exact anyway */
            int64_t lo = F->seg_head, hi = n;
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (F->seg[mid].end < seq_end) lo = mid + 1; else hi = mid;
            }
            if (F->seg[lo].end != seq_end) {
                if (grow((void **)&F->seg, &F->cap_seg, n + 1, sizeof(Seg))) goto nomem;
                memmove(F->seg + lo + 1, F->seg + lo, sizeof(Seg) * (size_t)(n - lo));
                F->seg[lo] = (Seg){seq_end, seq_u, t, p->frame};
                F->n_seg++;
            }
        }
    }
    if (has_ts && ts_put(F, p->tsval, t, p->frame)) return -1;
    /* RTT: this flow's advancing ACKs give samples of the peer's data */
    if (ackf && !F->k_known) {
        for (int j = 0; j < 3; j++) {
            int64_t v = u0 + (j - 1) * TWO32;
            if (v == -1) F->pre_minus1[j] = 1;
            if (!dup && v >= 0 && (!F->pre_has[j] || u0 > F->pre_max[j])) { F->pre_has[j] = 1; F->pre_max[j] = u0; }
        }
    } else if (ackf && !dup && ack_u >= 0 && (!F->adv_has || ack_u > F->adv_max)) {
        F->adv_has = 1;
        F->adv_max = ack_u;
        if (P->seen) {
            int64_t lo = P->seg_head, hi = P->n_seg;
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (P->seg[mid].end < ack_u) lo = mid + 1; else hi = mid;
            }
            if (lo < P->n_seg && P->seg[lo].end == ack_u) {
                Seg *s = &P->seg[lo];
                SeqSample smp = {s->t, t, s->seq, s->end, p->frame};
                PUSH(P->ss, P->n_ss, P->cap_ss, smp);
                lo++;
            }
            P->seg_head = lo;
            if (P->seg_head == P->n_seg) { P->seg_head = 0; P->n_seg = 0; }
            if (has_ts && p->tsecr != 0) {
                int64_t t_seg;
                if (ts_get(P, p->tsecr, &t_seg)) {
                    TsSample smp = {t_seg, t, p->frame};
                    PUSH(P->ts, P->n_ts, P->cap_ts, smp);
                }
            }
        }
    }
    /* per-row outputs */
    if (x->want_rows && p->row >= 0) {
        int64_t r = p->row;
        x->o_seq[r] = seq_u;
        x->o_end[r] = seq_end;
        x->o_ack[r] = ackf ? u0 : -1; /* shifted by k at the end */
        x->o_bits[r] = (uint16_t)((d == 0 ? O_INIT : 0) | (rtx ? O_RTX : 0) | (dup ? O_DUP : 0) |
                                  (dupack ? O_DUPACK : 0) | (ka ? O_KA : 0) | (fast ? O_FAST : 0) |
                                  (spur ? O_SPUR : 0) | (ooo ? O_OOO : 0) | (zw ? O_ZW : 0) | (zwp ? O_ZWP : 0) |
                                  (wu ? O_WU : 0) | (wf ? O_WF : 0) | (nc ? O_NC : 0) | (au ? O_AU : 0));
    }
    return 0;
nomem:
    return -1;
}

/* ------------------------------------------------------------------ connections */

static inline int is_initiator(const Conn *c, const Pkt *p) {
    return p->shi == c->ihi && p->slo == c->ilo && p->svp == c->ivp;
}

static void lru_unlink(Ctx *x, int64_t i) {
    Conn *c = &x->c[i];
    if (c->lru_prev >= 0) x->c[c->lru_prev].lru_next = c->lru_next; else x->lru_head = c->lru_next;
    if (c->lru_next >= 0) x->c[c->lru_next].lru_prev = c->lru_prev; else x->lru_tail = c->lru_prev;
    c->lru_prev = c->lru_next = -1;
}

static void lru_append(Ctx *x, int64_t i) {
    Conn *c = &x->c[i];
    c->lru_prev = x->lru_tail;
    c->lru_next = -1;
    if (x->lru_tail >= 0) x->c[x->lru_tail].lru_next = i; else x->lru_head = i;
    x->lru_tail = i;
}

static int replay(Ctx *x, int64_t ci) {
    /* process the queued packets of a connection whose initial RTT is now known (or will never be) */
    Conn *c = &x->c[ci];
    c->pending = 0;
    for (int64_t j = 0; j < c->n_pq; j++) {
        Pkt q = x->c[ci].pq[j];
        c = &x->c[ci];
        if (process(x, c, is_initiator(c, &q) ? 0 : 1, &q)) return -1;
    }
    c = &x->c[ci];
    free(c->pq);
    c->pq = NULL;
    c->n_pq = c->cap_pq = 0;
    return 0;
}

/* the k-th smallest of v[0..n) (v reordered; no NaN) */
static double kth_smallest(double *v, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) { double t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}

static double median(double *v, int64_t n) {
    /* as pandas' groupby median: the middle value, or the mean of the two middle values */
    if (n == 0) return NAN;
    double upper = kth_smallest(v, n, n / 2);
    if (n % 2) return upper;
    double lower = v[0]; /* after the selection, v[0 .. n/2) are the values at or below the middle */
    for (int64_t i = 1; i < n / 2; i++) if (v[i] > lower) lower = v[i];
    return (upper + lower) / 2;
}

/* numpy's pairwise summation of float64 (the inner loop of np.add.reduce) */
static double pairwise_sum(const double *a, int64_t n) {
    if (n < 8) {
        double res = 0.;
        for (int64_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        int64_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

static double mean_as_pandas(const double *v, int64_t n) {
    /* pandas' groupby mean over sorted groups: np.add.reduceat (the first value, plus the pairwise sum of the
       rest) over the count */
    if (n == 0) return NAN;
    return (v[0] + pairwise_sum(v + 1, n - 1)) / (double)n;
}

static int cmp_rtx_seq(const void *a, const void *b) {
    const Rtx *u = a, *v = b;
    if (u->seq != v->seq) return (u->seq > v->seq) - (u->seq < v->seq);
    return (u->order > v->order) - (u->order < v->order);
}

typedef struct { double t; int64_t order, seq; } RtxT;

static int cmp_rtx_t(const void *a, const void *b) {
    const RtxT *u = a, *v = b;
    if (u->t != v->t) return (u->t > v->t) - (u->t < v->t);
    return (u->order > v->order) - (u->order < v->order);
}

/* emit one direction's flow row (and its RTT samples) */
static int emit_flow(Ctx *x, Conn *c, int d) {
    Flow *F = &c->f[d], *P = &c->f[1 - d];
    FlowOut o;
    memset(&o, 0, sizeof o);
    o.tuple_idx = c->tuple_idx; o.conn = c->id; o.dir = d; o.first_row = F->first_row;
    o.conn_first_frame = c->first_frame;
    o.tuple_first_frame = c->tuple_first_frame;
    o.shi = (int64_t)F->shi; o.slo = (int64_t)F->slo; o.svp = F->svp;
    o.dhi = (int64_t)F->dhi; o.dlo = (int64_t)F->dlo; o.dvp = F->dvp;
    o.first_ns = F->first_ns; o.last_ns = F->last_ns;
    o.syn_seen = F->syn_seen; o.fin_seen = F->fin_seen; o.rst_seen = F->rst_seen;
    o.packets = F->packets; o.data_packets = F->data_packets; o.payload_bytes = F->payload_bytes;
    o.wire_bytes = F->wire_bytes;
    int64_t uniq = 0;
    for (int64_t i = 0; i < F->n_iv; i++) uniq += F->iv[i].e - F->iv[i].s;
    o.unique_bytes = uniq;
    int64_t ncap = 0;
    if (F->span_has) {
        int64_t top = F->span_fin_has && F->span_fin < F->span_hi ? F->span_fin : F->span_hi;
        int64_t w = top - F->span_lo;
        if (w < 0) w = 0;
        ncap = w - uniq;
        if (ncap < 0) ncap = 0;
    }
    o.not_captured_bytes = ncap;
    o.rtx = F->rtx; o.rtx_bytes = F->rtx_bytes; o.rtx_data = F->rtx_data; o.sent_data = F->sent_data;
    o.fast = F->fast; o.spur = F->spur; o.ooo = F->ooo; o.dup = F->dup; o.dupack = F->dupack;
    o.ka = F->ka; o.zw = F->zw; o.zwp = F->zwp; o.wu = F->wu; o.wf = F->wf; o.nc = F->nc;
    o.au = c->au_candidate ? F->au : 0;
    /* FCT: the connection's SYN -> the first ACK of the peer covering this flow's last data byte */
    o.fct = NAN;
    if (F->last_end_has && c->syn_t_has) {
        int64_t kp = k_of(P);
        int64_t thr = F->last_end > 0 ? F->last_end : 0;
        int64_t best = 0; int has = 0;
        for (int64_t i = 0; i < P->n_fr; i++) {
            if (P->fr[i].v + kp >= thr) { best = P->fr[i].t; has = 1; break; }
        }
        if (has) {
            double v = rel_s(x, best) - rel_s(x, c->syn_t);
            if (v < 0) { o.fct_negative = 1; v = NAN; }
            o.fct = v;
        }
    }
    /* RTT samples: Karn's rule on the whole flow's retransmissions */
    Rtx *bys = NULL; RtxT *byt = NULL; int64_t *maxend = NULL; double *vals = NULL;
    int64_t nr = F->n_rt;
    if (nr) {
        bys = malloc(sizeof(Rtx) * (size_t)nr);
        byt = malloc(sizeof(RtxT) * (size_t)nr);
        maxend = malloc(sizeof(int64_t) * (size_t)nr);
        if (!bys || !byt || !maxend) goto nomem;
        memcpy(bys, F->rt, sizeof(Rtx) * (size_t)nr);
        qsort(bys, (size_t)nr, sizeof(Rtx), cmp_rtx_seq);
        for (int64_t i = 0; i < nr; i++) maxend[i] = i && maxend[i - 1] > bys[i].end ? maxend[i - 1] : bys[i].end;
        for (int64_t i = 0; i < nr; i++) byt[i] = (RtxT){rel_s(x, F->rt[i].t), F->rt[i].order, F->rt[i].seq};
        qsort(byt, (size_t)nr, sizeof(RtxT), cmp_rtx_t);
    }
    if (grow((void **)&x->scratch, &x->cap_scratch, F->n_ss + F->n_ts + 1, sizeof(double))) goto nomem;
    vals = x->scratch;
    int64_t nv = 0;
    double vmin = NAN;
    for (int64_t i = 0; i < F->n_ss; i++) {
        SeqSample *s = &F->ss[i];
        double t_seg = rel_s(x, s->t_seg), t_ack = rel_s(x, s->t_ack);
        if (nr) {
            /* Karn, first half: a retransmission overlapping the segment's bytes, at any time */
            int64_t lo = 0, hi = nr;
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (bys[mid].seq <= s->key - 1) lo = mid + 1; else hi = mid;
            }
            if (lo > 0 && maxend[lo - 1] > s->seq) continue;
            /* second half: the latest retransmission before the ACK, sent after the segment, of bytes below it */
            lo = 0; hi = nr;
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (byt[mid].t < t_ack) lo = mid + 1; else hi = mid;
            }
            if (lo > 0 && byt[lo - 1].t > t_seg && byt[lo - 1].seq < s->key) continue;
        }
        double r = t_ack - t_seg;
        if (r < 0) { x->negative_rtt++; continue; }
        vals[nv++] = r;
        if (x->want_samples) {
            SampleOut so = {c->id, d, 0, s->frame, t_ack, r};
            PUSH(x->so, x->n_so, x->cap_so, so);
        }
    }
    o.rtt_n = nv;
    if (nv) {
        vmin = vals[0];
        for (int64_t i = 1; i < nv; i++) if (vals[i] < vmin) vmin = vals[i];
        o.rtt_mean = mean_as_pandas(vals, nv);
        o.rtt_median = median(vals, nv);
    } else {
        o.rtt_mean = o.rtt_median = NAN;
    }
    o.rtt_min = vmin;
    nv = 0;
    for (int64_t i = 0; i < F->n_ts; i++) {
        TsSample *s = &F->ts[i];
        double t_ack = rel_s(x, s->t_ack);
        double r = t_ack - rel_s(x, s->t_seg);
        if (r < 0) { x->negative_rtt++; continue; }
        vals[nv++] = r;
        if (x->want_samples) {
            SampleOut so = {c->id, d, 1, s->frame, t_ack, r};
            PUSH(x->so, x->n_so, x->cap_so, so);
        }
    }
    o.rtt_ts_n = nv;
    o.rtt_ts_median = median(vals, nv);
    free(bys); free(byt); free(maxend);
    PUSH(x->fo, x->n_fo, x->cap_fo, o);
    return 0;
nomem:
    free(bys); free(byt); free(maxend);
    return -1;
}

static int finish_conn(Ctx *x, int64_t ci, int release) {
    Conn *c = &x->c[ci];
    if (c->pending && replay(x, ci)) return -1;
    c = &x->c[ci];
    if (c->dirty && x->stream) x->inexact_conns++;
    for (int d = 0; d < 2; d++)
        if (c->f[d].seen && emit_flow(x, &x->c[ci], d)) return -1;
    if (release) {
        c = &x->c[ci];
        for (int d = 0; d < 2; d++) flow_free(&c->f[d]);
        if (c->tuple_slot >= 0 && x->tt.e[c->tuple_slot].conn == ci) tt_remove(&x->tt, c->tuple_slot);
        lru_unlink(x, ci);
        x->live--;
        c->live = 0;
        c->lru_next = x->free_c;
        x->free_c = ci;
    }
    return 0;
}

static int64_t new_conn(Ctx *x, int64_t tslot, const Pkt *p, int64_t *count) {
    int64_t ci;
    if (x->stream && x->free_c >= 0) {
        ci = x->free_c;
        x->free_c = x->c[ci].lru_next;
    } else {
        if (grow((void **)&x->c, &x->cap_c, x->n_c + 1, sizeof(Conn))) return -1;
        ci = x->n_c++;
    }
    Conn *c = &x->c[ci];
    memset(c, 0, sizeof *c);
    flow_reset(&c->f[0]);
    flow_reset(&c->f[1]);
    c->id = (*count)++;
    c->tuple_idx = x->tt.e[tslot].idx;
    c->tuple_first_frame = x->tt.e[tslot].first_frame;
    c->tuple_slot = tslot;
    c->first_frame = p->frame;
    c->last_t = p->t;
    c->ihi = p->shi; c->ilo = p->slo; c->ivp = p->svp;
    c->irtt = NAN;
    c->pending = (p->fb & B_SYN) && !(p->fb & B_ACK);
    c->live = 1;
    c->lru_prev = c->lru_next = -1;
    if (x->stream) { lru_append(x, ci); x->live++; }
    return ci;
}


static int on_packet(Ctx *x, const Pkt *p, int64_t *conn_count) {
    int64_t ts = tt_get(&x->tt, p);
    if (ts < 0) return -1;
    const int syn_only = (p->fb & B_SYN) && !(p->fb & B_ACK);
    Tuple *tu = &x->tt.e[ts];
    int64_t ci = tu->conn;
    if (x->stream && ci >= 0 && x->c[ci].last_t < p->t - x->idle_ns) {
        /* idle past the timeout: finished, and the 4-tuple starts afresh (as if expired before this packet) */
        if (finish_conn(x, ci, 1)) return -1;
        ts = tt_get(&x->tt, p);
        if (ts < 0) return -1;
        tu = &x->tt.e[ts];
        ci = tu->conn;
    }
    if (ci < 0 || (syn_only && (!tu->has_syn || tu->last_syn != (int64_t)p->seq))) {
        if (ci >= 0 && x->stream) {
            /* the tuple's previous connection can get no more packets */
            tu->conn = -1;
            x->c[ci].tuple_slot = -1;
            if (finish_conn(x, ci, 1)) return -1;
        }
        ci = new_conn(x, ts, p, conn_count);
        if (ci < 0) return -1;
        tu = &x->tt.e[ts];
        tu->conn = ci;
    }
    if (syn_only) { tu->last_syn = p->seq; tu->has_syn = 1; }
    Conn *c = &x->c[ci];
    if (p->t > c->last_t) c->last_t = p->t;
    if (x->o_conn && p->row >= 0) x->o_conn[p->row] = c->id;
    if (c->pending) {
        PUSH(c->pq, c->n_pq, c->cap_pq, *p);
        if (syn_only) c->last_synonly_t = p->t;
        /* Wireshark 4.0.17's ts_first_rtt: the first packet with ACK and without SYN after a SYN (no SYN/ACK
           needed), from the most recent SYN */
        if ((p->fb & B_ACK) && !(p->fb & B_SYN)) {
            double v = (double)p->t - (double)c->last_synonly_t;
            c->irtt = v > 0 ? v : NAN;
            return replay(x, ci);
        }
        return 0;
    }
    return process(x, c, is_initiator(c, p) ? 0 : 1, p);
nomem:
    return -1;
}

/* ------------------------------------------------------------------ buffers */

#define N_IN 21
static const char *IN_NAMES[N_IN] = {"t", "frame", "shi", "slo", "svp", "dhi", "dlo", "dvp", "seq", "ack", "ipid",
                                     "payload", "tsval", "tsecr", "sackl", "wire", "flags", "win", "fb", "ws", "mpsub"};
static const Py_ssize_t IN_SIZE[N_IN] = {8, 8, 8, 8, 4, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 1, 1, 1};

typedef struct {
    Py_buffer b[N_IN];
    int have[N_IN];
    Py_ssize_t n;
} Inputs;

static void inputs_release(Inputs *in) {
    for (int k = 0; k < N_IN; k++) if (in->have[k]) PyBuffer_Release(&in->b[k]);
}

static int inputs_get(PyObject *seq, Inputs *in) {
    memset(in, 0, sizeof *in);
    if (!PyTuple_Check(seq) || PyTuple_GET_SIZE(seq) != N_IN) {
        PyErr_Format(PyExc_ValueError, "expected a tuple of %d column buffers", N_IN);
        return -1;
    }
    in->n = -1;
    for (int k = 0; k < N_IN; k++) {
        PyObject *o = PyTuple_GET_ITEM(seq, k);
        if (o == Py_None && (k == 2 || k == 5)) continue; /* address high halves: zero */
        if (PyObject_GetBuffer(o, &in->b[k], PyBUF_C_CONTIGUOUS) < 0) { inputs_release(in); return -1; }
        in->have[k] = 1;
        Py_ssize_t n = in->b[k].len / IN_SIZE[k];
        if (in->b[k].len % IN_SIZE[k] || (in->n >= 0 && n != in->n)) {
            PyErr_Format(PyExc_ValueError, "column %s: %zd bytes, expected %zd per row for %zd rows", IN_NAMES[k],
                         in->b[k].len, IN_SIZE[k], in->n);
            inputs_release(in);
            return -1;
        }
        in->n = n;
    }
    if (in->n < 0) in->n = 0;
    return 0;
}

#define COL(T, k) ((const T *)in->b[k].buf)
#define COL2(in, T, k) ((const T *)(in).b[k].buf)

static inline void load_pkt(const Inputs *in, Py_ssize_t i, Pkt *p, int64_t row) {
    p->row = row;
    p->t = COL(int64_t, 0)[i];
    p->frame = COL(int64_t, 1)[i];
    p->shi = in->have[2] ? COL(uint64_t, 2)[i] : 0;
    p->slo = COL(uint64_t, 3)[i];
    p->svp = COL(uint32_t, 4)[i];
    p->dhi = in->have[5] ? COL(uint64_t, 5)[i] : 0;
    p->dlo = COL(uint64_t, 6)[i];
    p->dvp = COL(uint32_t, 7)[i];
    p->seq = COL(uint32_t, 8)[i];
    p->ack = COL(uint32_t, 9)[i];
    p->ipid = COL(uint32_t, 10)[i];
    p->payload = COL(uint32_t, 11)[i];
    p->tsval = COL(uint32_t, 12)[i];
    p->tsecr = COL(uint32_t, 13)[i];
    p->sackl = COL(uint32_t, 14)[i];
    p->wire = COL(uint32_t, 15)[i];
    p->flags = COL(uint16_t, 16)[i];
    p->win = COL(uint16_t, 17)[i];
    p->fb = COL(uint8_t, 18)[i];
    p->ws = COL(int8_t, 19)[i];
    p->mpsub = COL(int8_t, 20)[i];
}

/* fetch ahead what later packets will need: their duplicate slot and 4-tuple bucket (16 ahead), the
   4-tuple's entry (8 ahead, its bucket fetched by then) */
#define AHEAD 16

static inline void prefetch_ahead(const Ctx *x, const Inputs *in, Py_ssize_t i, Pkt *tmp) {
    if (i + AHEAD < in->n) {
        load_pkt(in, i + AHEAD, tmp, -1);
        dup_prefetch(&x->dt, tmp);
        tt_prefetch(&x->tt, tmp, 0);
    }
    if (i + AHEAD / 2 < in->n) {
        load_pkt(in, i + AHEAD / 2, tmp, -1);
        tt_prefetch(&x->tt, tmp, 1);
    }
}

/* suffix minima of the timestamps per block of rows: a lower bound on every later packet's time */
#define BLOCK 1024

static double *suffix_minima(const Inputs *in) {
    Py_ssize_t n = in->n, nbk = (n + BLOCK - 1) / BLOCK;
    double *m = malloc(sizeof(double) * (size_t)(nbk + 1));
    if (!m) return NULL;
    m[nbk] = INFINITY;
    const int64_t *t = COL(int64_t, 0);
    for (Py_ssize_t b = nbk - 1; b >= 0; b--) {
        int64_t lo = t[b * BLOCK];
        Py_ssize_t end = (b + 1) * BLOCK < n ? (b + 1) * BLOCK : n;
        for (Py_ssize_t i = b * BLOCK; i < end; i++) if (t[i] < lo) lo = t[i];
        double v = (double)lo;
        m[b] = v < m[b + 1] ? v : m[b + 1];
    }
    return m;
}

static void ctx_free(Ctx *x) {
    if (x->c) {
        for (int64_t i = 0; i < x->n_c; i++) {
            flow_free(&x->c[i].f[0]);
            flow_free(&x->c[i].f[1]);
            free(x->c[i].pq);
        }
    }
    free(x->c); free(x->fo); free(x->so); free(x->scratch);
    tt_free(&x->tt);
    dup_free(&x->dt);
    memset(x, 0, sizeof *x);
}

static int ctx_init(Ctx *x, int64_t ns0, int stream, int want_samples) {
    memset(x, 0, sizeof *x);
    x->ns0 = ns0;
    x->stream = stream;
    x->want_samples = want_samples;
    x->free_c = -1;
    x->lru_head = x->lru_tail = -1;
    if (tt_init(&x->tt) || dup_init(&x->dt)) { ctx_free(x); return -1; }
    return 0;
}

static PyObject *results(Ctx *x) {
    PyObject *fo = PyBytes_FromStringAndSize((const char *)x->fo, (Py_ssize_t)(sizeof(FlowOut) * (size_t)x->n_fo));
    PyObject *so = PyBytes_FromStringAndSize((const char *)x->so,
                                             (Py_ssize_t)(sizeof(SampleOut) * (size_t)x->n_so));
    if (!fo || !so) { Py_XDECREF(fo); Py_XDECREF(so); return NULL; }
    return Py_BuildValue("NN", fo, so);
}

/* analyze(columns, ns0, want_samples, outs) -> (flows bytes, samples bytes, (connections, rerun, negative rtt))
   outs: None, or (conn int64[n], seq_u int64[n], seq_end_u int64[n], ack_u int64[n], bits uint16[n]);
   conn and flow ids of the outputs are final (the reference's numbering). */
static PyObject *analyze(PyObject *self, PyObject *args) {
    PyObject *cols, *outs;
    long long ns0;
    int want_samples;
    if (!PyArg_ParseTuple(args, "OLpO", &cols, &ns0, &want_samples, &outs)) return NULL;
    Inputs in;
    if (inputs_get(cols, &in)) return NULL;
    Py_buffer ob[5];
    int nob = 0;
    Ctx x;
    double *smin = NULL;
    int64_t *rank = NULL, *own_conn = NULL;
    PyObject *ret = NULL;
    if (ctx_init(&x, ns0, 0, want_samples)) { inputs_release(&in); return PyErr_NoMemory(); }
    const Py_ssize_t n = in.n;
    if (outs != Py_None) {
        static const Py_ssize_t sz[5] = {8, 8, 8, 8, 2};
        if (!PyTuple_Check(outs) || PyTuple_GET_SIZE(outs) != 5) {
            PyErr_SetString(PyExc_ValueError, "outs must be None or a tuple of 5 buffers");
            goto done;
        }
        for (; nob < 5; nob++) {
            if (PyObject_GetBuffer(PyTuple_GET_ITEM(outs, nob), &ob[nob], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
                goto done;
            if (ob[nob].len != n * sz[nob]) {
                nob++;
                PyErr_SetString(PyExc_ValueError, "output buffer of the wrong size");
                goto done;
            }
        }
        x.want_rows = 1;
        x.o_conn = ob[0].buf; x.o_seq = ob[1].buf; x.o_end = ob[2].buf; x.o_ack = ob[3].buf; x.o_bits = ob[4].buf;
    }
    if (!x.want_rows) {
        own_conn = malloc(sizeof(int64_t) * (size_t)(n + 1));
        if (!own_conn) { PyErr_NoMemory(); goto done; }
        x.o_conn = own_conn;
    }
    smin = suffix_minima(&in);
    if (!smin) { PyErr_NoMemory(); goto done; }
    int64_t count = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    Pkt p;
    Pkt ahead;
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        if (i % BLOCK == 0) dup_expire(&x.dt, smin[i / BLOCK]);
        prefetch_ahead(&x, &in, i, &ahead);
        load_pkt(&in, i, &p, i);
        if (on_packet(&x, &p, &count)) failed = 1;
    }
    /* connections still waiting for their initial RTT: it was never measured */
    for (int64_t ci = 0; ci < x.n_c && !failed; ci++)
        if (x.c[ci].pending && replay(&x, ci)) failed = 1;
    /* connections where a later packet changed an earlier decision: again, with the final facts */
    int64_t rerun = 0;
    for (int64_t ci = 0; ci < x.n_c; ci++) rerun += x.c[ci].dirty;
    if (rerun && !failed) {
        {
            dup_free(&x.dt);
            if (dup_init(&x.dt)) failed = 1;
            for (int64_t ci = 0; ci < x.n_c && !failed; ci++) {
                Conn *c = &x.c[ci];
                if (!c->dirty) continue;
                for (int d = 0; d < 2; d++) {
                    Flow keep = c->f[d];
                    flow_reset(&c->f[d]);
                    Flow *f = &c->f[d];
                    f->has_syn = keep.has_syn;
                    f->offered = keep.offered;
                    f->k_known = 1;
                    f->k = keep.k_known ? keep.k : 0;
                }
                c->mpc = 0; c->au_candidate = 0; c->syn_t_has = 0; c->wf_evaluated = 0; c->synack_seen = 0;
            }
            for (Py_ssize_t i = 0; i < n && !failed; i++) {
                if (i % BLOCK == 0) dup_expire(&x.dt, smin[i / BLOCK]);
                int64_t ci = x.o_conn[i];
                if (!x.c[ci].dirty) continue;
                load_pkt(&in, i, &p, i);
                if (process(&x, &x.c[ci], is_initiator(&x.c[ci], &p) ? 0 : 1, &p)) failed = 1;
            }
        }
    }
    for (int64_t ci = 0; ci < x.n_c && !failed; ci++)
        if (finish_conn(&x, ci, 0)) failed = 1;
    /* the reference's numbering: by the first packet of the 4-tuple, then the connection's own */
    if (!failed) {
        int64_t nc = x.n_c;
        int64_t *byt = calloc((size_t)(x.tt.count + 1), sizeof(int64_t));
        rank = malloc(sizeof(int64_t) * (size_t)(nc + 1));
        if (!byt || !rank) failed = 1;
        else {
            for (int64_t ci = 0; ci < nc; ci++) byt[x.c[ci].tuple_idx + 1]++;
            for (int64_t k = 0; k < x.tt.count; k++) byt[k + 1] += byt[k];
            for (int64_t ci = 0; ci < nc; ci++) rank[ci] = byt[x.c[ci].tuple_idx]++; /* ids rise within a tuple */
        }
        free(byt);
    }
    if (!failed && x.want_rows) {
        const uint8_t *fb = COL2(in, uint8_t, 18);
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t ci = x.o_conn[i];
            Conn *c = &x.c[ci];
            int d = (x.o_bits[i] & O_INIT) ? 0 : 1;
            x.o_conn[i] = rank[ci];
            if (fb[i] & B_ACK) x.o_ack[i] += k_of(&c->f[d]);
            if (!c->au_candidate) x.o_bits[i] &= (uint16_t)~O_AU;
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) { PyErr_NoMemory(); goto done; }
    for (int64_t i = 0; i < x.n_fo; i++) x.fo[i].conn = rank[x.fo[i].conn];
    for (int64_t i = 0; i < x.n_so; i++) x.so[i].conn = rank[x.so[i].conn];
    {
        PyObject *r = results(&x);
        if (!r) goto done;
        int64_t rerun = 0;
        for (int64_t ci = 0; ci < x.n_c; ci++) rerun += x.c[ci].dirty;
        ret = Py_BuildValue("NLLL", r, (long long)x.n_c, (long long)rerun, (long long)x.negative_rtt);
    }
done:
    free(smin);
    free(rank);
    free(own_conn);
    for (int k = 0; k < nob; k++) PyBuffer_Release(&ob[k]);
    inputs_release(&in);
    ctx_free(&x);
    return ret;
}

/* ------------------------------------------------------------------ streaming */

typedef struct {
    PyObject_HEAD
    Ctx x;
    int64_t count, packets;
    int ready, finished;
} Stream;

static int stream_init(Stream *self, PyObject *args, PyObject *kw) {
    long long ns0, idle_ns;
    int want_samples = 0;
    static char *names[] = {"ns0", "idle_ns", "want_samples", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "LL|p", names, &ns0, &idle_ns, &want_samples)) return -1;
    if (idle_ns <= 0) {
        PyErr_Format(PyExc_ValueError, "idle_ns [ns] must be positive; got %lld", idle_ns);
        return -1;
    }
    if (self->ready) ctx_free(&self->x);
    if (ctx_init(&self->x, ns0, 1, want_samples)) { PyErr_NoMemory(); return -1; }
    self->x.idle_ns = idle_ns;
    self->count = self->packets = 0;
    self->ready = 1;
    self->finished = 0;
    return 0;
}

static void stream_dealloc(Stream *self) {
    if (self->ready) ctx_free(&self->x);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int stream_check(Stream *self) {
    if (!self->ready) { PyErr_SetString(PyExc_RuntimeError, "Stream not initialised"); return -1; }
    if (self->finished) { PyErr_SetString(PyExc_RuntimeError, "Stream already finished"); return -1; }
    return 0;
}

static int64_t live_conns(const Ctx *x) { return x->live; }

/* every SCAN_PACKETS packets: finish the connections idle past the timeout (their memory back) */
#define SCAN_PACKETS 65536

static int expire_idle(Ctx *x) {
    x->since_scan = 0;
    if (x->live > x->max_live) x->max_live = x->live;
    int64_t i = x->lru_head;
    while (i >= 0) {
        int64_t nx = x->c[i].lru_next;
        if (x->c[i].last_t < x->now - x->idle_ns && finish_conn(x, i, 1)) return -1;
        i = nx;
    }
    return 0;
}

/* feed(columns): packets in capture order; connections idle longer than idle_ns are finished */
static PyObject *stream_feed(Stream *self, PyObject *args) {
    PyObject *cols;
    if (!PyArg_ParseTuple(args, "O", &cols)) return NULL;
    if (stream_check(self)) return NULL;
    Inputs in;
    if (inputs_get(cols, &in)) return NULL;
    Ctx *x = &self->x;
    double *smin = suffix_minima(&in);
    if (!smin) { inputs_release(&in); return PyErr_NoMemory(); }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    Pkt p;
    Pkt ahead;
    for (Py_ssize_t i = 0; i < in.n && !failed; i++) {
        if (i % BLOCK == 0) dup_expire(&x->dt, smin[i / BLOCK]);
        prefetch_ahead(x, &in, i, &ahead);
        load_pkt(&in, i, &p, -1);
        if (on_packet(x, &p, &self->count)) failed = 1;
        if (p.t > x->now) x->now = p.t;
        if (++x->since_scan >= SCAN_PACKETS && !failed && expire_idle(x)) failed = 1;
    }
    if (!failed && expire_idle(x)) failed = 1;
    Py_END_ALLOW_THREADS
    free(smin);
    self->packets += in.n;
    inputs_release(&in);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* take() -> (flows bytes, samples bytes) finished since the last take */
static PyObject *stream_take(Stream *self, PyObject *unused) {
    if (!self->ready) { PyErr_SetString(PyExc_RuntimeError, "Stream not initialised"); return NULL; }
    PyObject *r = results(&self->x);
    if (!r) return NULL;
    self->x.n_fo = 0;
    self->x.n_so = 0;
    return r;
}

/* finish(): finish every live connection (what take() then returns) */
static PyObject *stream_finish(Stream *self, PyObject *unused) {
    if (stream_check(self)) return NULL;
    Ctx *x = &self->x;
    int failed = 0;
    if (x->live > x->max_live) x->max_live = x->live;
    while (x->lru_head >= 0 && !failed) if (finish_conn(x, x->lru_head, 1)) failed = 1;
    if (failed) return PyErr_NoMemory();
    self->finished = 1;
    Py_RETURN_NONE;
}

/* stats() -> dict */
static PyObject *stream_stats(Stream *self, PyObject *unused) {
    if (!self->ready) { PyErr_SetString(PyExc_RuntimeError, "Stream not initialised"); return NULL; }
    Ctx *x = &self->x;
    return Py_BuildValue("{sLsLsLsLsLsL}", "packets", (long long)self->packets, "connections", (long long)self->count,
                         "live_connections", (long long)live_conns(x), "max_live_connections",
                         (long long)x->max_live, "inexact_connections", (long long)x->inexact_conns,
                         "negative_rtt_samples", (long long)x->negative_rtt);
}

static PyMethodDef stream_methods[] = {
    {"feed", (PyCFunction)stream_feed, METH_VARARGS, "feed(columns): analyse packets in capture order"},
    {"take", (PyCFunction)stream_take, METH_NOARGS, "take() -> (flows, samples) finished since the last take"},
    {"finish", (PyCFunction)stream_finish, METH_NOARGS, "finish(): finish every live connection"},
    {"stats", (PyCFunction)stream_stats, METH_NOARGS, "stats() -> dict of counters"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tcpmodels.traces.cflows.Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(ns0, idle_ns, want_samples=False): the per-connection pass over chunks of packets",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)stream_init,
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_methods = stream_methods,
};


/* ------------------------------------------------------------------ splitting a capture over workers */

/* the hash of connpass.connection_share (mix64 is splitmix64's finaliser, as connpass._mix) */
static inline uint64_t end_hash(uint64_t hi, uint64_t lo, uint32_t vp) {
    uint64_t h = mix64(hi ^ 0x9E3779B97F4A7C15ULL);
    h = mix64(h ^ lo);
    return mix64(h ^ (uint64_t)vp);
}

/* connection_shares(shi, slo, svp, dhi, dlo, dvp, shares, out) -> None
   The share of each packet as connpass.connection_share computes it: uint64 address halves, uint32
   (version << 16 | port), out int8 (shares <= 127). Every buffer is checked to hold n items. */
static PyObject *connection_shares(PyObject *self, PyObject *args) {
    Py_buffer b[7];
    long long shares;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*Lw*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &shares, &b[6]))
        return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = b[6].len;  /* int8 out: one byte per packet */
    static const Py_ssize_t width[6] = {8, 8, 4, 8, 8, 4};
    if (shares < 1 || shares > 127) {
        PyErr_Format(PyExc_ValueError, "shares must be in [1, 127]; got %lld", shares);
        goto done;
    }
    for (int k = 0; k < 6; k++)
        if (b[k].len != n * width[k]) {
            PyErr_Format(PyExc_ValueError, "column %d holds %zd bytes; expected %zd (%zd packets)", k, b[k].len,
                         n * width[k], n);
            goto done;
        }
    const char *shi = b[0].buf, *slo = b[1].buf, *svp = b[2].buf, *dhi = b[3].buf, *dlo = b[4].buf,
               *dvp = b[5].buf;
    int8_t *out = b[6].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t a[4];
        uint32_t v[2];
        memcpy(&a[0], shi + 8 * i, 8); memcpy(&a[1], slo + 8 * i, 8); memcpy(&v[0], svp + 4 * i, 4);
        memcpy(&a[2], dhi + 8 * i, 8); memcpy(&a[3], dlo + 8 * i, 8); memcpy(&v[1], dvp + 4 * i, 4);
        uint64_t h = mix64(end_hash(a[0], a[1], v[0]) + end_hash(a[2], a[3], v[1]));
        out[i] = (int8_t)(h % (uint64_t)shares);
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    for (int k = 0; k < 7; k++) PyBuffer_Release(&b[k]);
    return ret;
}

/* route(columns, owner, shares) -> tuple of bytes, one per share: the rows of share s (owner[i] == s), in
   their order, column after column (each column's rows contiguous, its item size kept). columns: a tuple of
   contiguous buffers of item size 1, 2, 4 or 8, each of len(owner) items; owner: int8 in [0, shares). */
#define ROUTE_MAX_COLUMNS 64
static PyObject *route(PyObject *self, PyObject *args) {
    PyObject *cols;
    Py_buffer own;
    long long shares;
    if (!PyArg_ParseTuple(args, "O!y*L", &PyTuple_Type, &cols, &own, &shares)) return NULL;
    Py_ssize_t nc = PyTuple_GET_SIZE(cols), n = own.len, got = 0, row_bytes = 0;
    Py_buffer b[ROUTE_MAX_COLUMNS];
    PyObject *out = NULL;
    int64_t count[128] = {0}, at[128];
    char *base[128];
    if (shares < 1 || shares > 127) {
        PyErr_Format(PyExc_ValueError, "shares must be in [1, 127]; got %lld", shares);
        goto done;
    }
    if (nc > ROUTE_MAX_COLUMNS) {
        PyErr_Format(PyExc_ValueError, "at most %d columns; got %zd", ROUTE_MAX_COLUMNS, nc);
        goto done;
    }
    for (; got < nc; got++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(cols, got), &b[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto done;
        Py_ssize_t w = b[got].itemsize;
        if ((w != 1 && w != 2 && w != 4 && w != 8) || b[got].len != n * w) {
            PyErr_Format(PyExc_ValueError, "column %zd: %zd bytes of item size %zd; expected %zd items of 1, 2, 4 "
                         "or 8 bytes", got, b[got].len, w, n);
            got++;
            goto done;
        }
        row_bytes += w;
    }
    const int8_t *o = own.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (o[i] < 0 || o[i] >= shares) {
            PyErr_Format(PyExc_ValueError, "owner[%zd] = %d is not a share in [0, %lld)", i, (int)o[i], shares);
            goto done;
        }
        count[o[i]]++;
    }
    if (row_bytes && n > PY_SSIZE_T_MAX / row_bytes) { PyErr_NoMemory(); goto done; }
    out = PyTuple_New((Py_ssize_t)shares);
    if (!out) goto done;
    for (long long s = 0; s < shares; s++) {
        PyObject *by = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(count[s] * row_bytes));
        if (!by) { Py_CLEAR(out); goto done; }
        PyTuple_SET_ITEM(out, (Py_ssize_t)s, by);
        base[s] = PyBytes_AS_STRING(by);
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t c = 0; c < nc; c++) {
        Py_ssize_t w = b[c].itemsize;
        for (long long s = 0; s < shares; s++) at[s] = 0;
        const char *src = b[c].buf;
        switch (w) {
/* memcpy of a constant size: plain moves, and no alignment assumed (the blocks are packed) */
#define ROUTE_COPY(T)                                                                      \
            for (Py_ssize_t i = 0; i < n; i++)                                             \
                memcpy(base[o[i]] + sizeof(T) * (size_t)at[o[i]]++, src + sizeof(T) * (size_t)i, sizeof(T)); \
            break;
            case 1: ROUTE_COPY(uint8_t)
            case 2: ROUTE_COPY(uint16_t)
            case 4: ROUTE_COPY(uint32_t)
            default: ROUTE_COPY(uint64_t)
#undef ROUTE_COPY
        }
        for (long long s = 0; s < shares; s++) base[s] += count[s] * w;
    }
    Py_END_ALLOW_THREADS
done:
    for (Py_ssize_t k = 0; k < got; k++) PyBuffer_Release(&b[k]);
    PyBuffer_Release(&own);
    return out;
}

static inline uint32_t rd32(const uint8_t *p, int big) {
    return big ? ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3]
               : (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* sync_classic(window, big_endian, frac_limit, max_incl, max_gap_s, chain) -> offset or -1
   The first offset of ``window`` (bytes of a classic pcap file read from some position) where ``chain``
   consecutive plausible record headers follow one another (fewer when the chain reaches the window's end
   exactly, at least 2): fraction of a second below ``frac_limit``, captured length from 1 to ``max_incl`` and at
   most the wire length, the wire length at most 2^18 + 2^16, seconds within ``max_gap_s`` of the previous
   record's. A guess only: the caller proves a cut right by walking to it from the previous one. */
static PyObject *sync_classic(PyObject *self, PyObject *args) {
    Py_buffer w;
    int big;
    long long frac_limit, max_incl, max_gap, chain;
    if (!PyArg_ParseTuple(args, "y*pLLLL", &w, &big, &frac_limit, &max_incl, &max_gap, &chain)) return NULL;
    const uint8_t *b = w.buf;
    Py_ssize_t len = w.len, found = -1;
    if (chain < 2) chain = 2;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t p = 0; p + 16 <= len && found < 0; p++) {
        Py_ssize_t q = p;
        long long k = 0, prev_sec = 0;
        int ok = 1;
        while (k < chain) {
            if (q == len && k >= 2) break;  /* the chain ends exactly at the window's end */
            if (q + 16 > len) { ok = 0; break; }
            uint32_t sec = rd32(b + q, big), frac = rd32(b + q + 4, big);
            uint32_t incl = rd32(b + q + 8, big), orig = rd32(b + q + 12, big);
            if ((long long)frac >= frac_limit || incl == 0 || (long long)incl > max_incl || incl > orig
                    || orig > (1u << 18) + (1u << 16)) { ok = 0; break; }
            if (k > 0 && llabs((long long)sec - prev_sec) > max_gap) { ok = 0; break; }
            prev_sec = sec;
            if ((Py_ssize_t)incl > len - q - 16) {  /* the record runs past the window */
                if (k >= 2) break;
                ok = 0;
                break;
            }
            q += 16 + (Py_ssize_t)incl;
            k++;
        }
        if (ok) found = p;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&w);
    return PyLong_FromSsize_t(found);
}

/* ------------------------------------------------------------------ module */

static PyObject *layout(PyObject *self, PyObject *unused) {
    return Py_BuildValue("nn", (Py_ssize_t)sizeof(FlowOut), (Py_ssize_t)sizeof(SampleOut));
}

static PyMethodDef methods[] = {
    {"analyze", analyze, METH_VARARGS, "analyze(columns, ns0, want_samples, outs) -> ((flows, samples), "
                                       "connections, rerun, negative_rtt)"},
    {"connection_shares", connection_shares, METH_VARARGS, "connection_shares(shi, slo, svp, dhi, dlo, dvp, "
                                                           "shares, out): the share of each packet"},
    {"route", route, METH_VARARGS, "route(columns, owner, shares) -> per share, its rows column after column"},
    {"sync_classic", sync_classic, METH_VARARGS, "sync_classic(window, big_endian, frac_limit, max_incl, max_gap_s, "
                                                 "chain) -> first plausible record offset or -1"},
    {"layout", layout, METH_NOARGS, "layout() -> (bytes per flow record, bytes per sample record)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cflows", "Compiled per-connection TCP analysis", -1,
                                    methods};

PyMODINIT_FUNC PyInit_cflows(void) {
    if (PyType_Ready(&StreamType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&StreamType);
    if (PyModule_AddObject(m, "Stream", (PyObject *)&StreamType) < 0) {
        Py_DECREF(&StreamType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
