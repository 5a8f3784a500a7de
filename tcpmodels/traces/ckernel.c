/* Compiled kernel of the native pcap reader: the per-record loops of tcpmodels.traces.

   walk_classic  walks the length-prefixed records of a classic pcap chunk.
   decode        decodes the common case (link layer, IPv4 or IPv6 without extension headers, TCP with its
                 options) of every record of a batch, exactly as tcpmodels.traces.decode does with numpy;
                 every other record (tunnels, fragments, IPv6 extension headers, non-TCP, truncated or
                 malformed headers) is flagged for that numpy path, which stays the reference.

   No numpy C API: arrays come in through the buffer protocol, allocated and typed by the Python side
   (tcpmodels/traces/decode.py and pcapfile.py). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t be16(const uint8_t *p) { return ((uint32_t)p[0] << 8) | p[1]; }
static inline uint32_t be32(const uint8_t *p) { return (be16(p) << 16) | be16(p + 2); }
static inline uint64_t be64(const uint8_t *p) { return ((uint64_t)be32(p) << 32) | be32(p + 4); }
static inline uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* walk_classic(chunk, big_endian, limit, out_pos, out_hdr) -> (count, end_pos, bad_pos, bad_incl)
   out_pos: int64[cap]; out_hdr: uint32[cap * 4] (sec, frac, incl, orig in host order).
   Stops at the first record not wholly inside the chunk (end_pos = its offset), at out_pos's capacity,
   or at a record claiming more than ``limit`` bytes (bad_pos = its offset, else -1). */
static PyObject *walk_classic(PyObject *self, PyObject *args) {
    Py_buffer chunk, opos, ohdr;
    int big;
    long long limit;
    if (!PyArg_ParseTuple(args, "y*pLw*w*", &chunk, &big, &limit, &opos, &ohdr)) return NULL;
    const uint8_t *b = (const uint8_t *)chunk.buf;
    Py_ssize_t end = chunk.len, pos = 0, n = 0;
    Py_ssize_t cap = opos.len / 8;
    if (ohdr.len / 16 < cap) cap = ohdr.len / 16;
    int64_t *po = (int64_t *)opos.buf;
    uint32_t *ho = (uint32_t *)ohdr.buf;
    long long bad_pos = -1, bad_incl = 0;
    Py_BEGIN_ALLOW_THREADS
    while (pos + 16 <= end && n < cap) {
        const uint8_t *h = b + pos;
        uint32_t w[4];
        for (int k = 0; k < 4; k++) w[k] = big ? be32(h + 4 * k) : le32(h + 4 * k);
        if ((long long)w[2] > limit) {
            bad_pos = pos;
            bad_incl = w[2];
            break;
        }
        Py_ssize_t nxt = pos + 16 + (Py_ssize_t)w[2];
        if (nxt > end) break;
        po[n] = pos;
        memcpy(ho + 4 * n, w, sizeof w);
        n++;
        pos = nxt;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&chunk);
    PyBuffer_Release(&opos);
    PyBuffer_Release(&ohdr);
    return Py_BuildValue("nnLL", n, pos, bad_pos, bad_incl);
}

#define N_OUT 35
enum {
    O_ROWS, O_VER, O_SRC_HI, O_SRC_LO, O_DST_HI, O_DST_LO, O_IPID, O_SPORT, O_DPORT, O_SEQ, O_ACK, O_FLAGS, O_WIN,
    O_DOFF, O_PAYLOAD, O_MSS, O_WS, O_SACKP, O_SACKN, O_SACKL, O_SACKR, O_HASTS, O_TSVAL, O_TSECR, O_MPSUB, O_MPVER,
    O_SKEY, O_RKEY, O_RTOK, O_HASDSN, O_DSN, O_SSEQ, O_DLEN, O_HASDACK, O_DACK
};

/* bytes per element of each output, in the order above */
static const Py_ssize_t OUT_SIZE[N_OUT] = {8, 1, 8, 8, 8, 8, 4, 2, 2, 4, 4, 2, 2, 1, 4, 4, 1, 1,
                                           1, 4, 4, 1, 4, 4, 1, 1, 8, 8, 4, 1, 8, 4, 2, 1, 8};

#define OUT(T, k) ((T *)o[k].buf)

static const int ETH_IPV4 = 0x0800, ETH_IPV6 = 0x86DD;

/* Link layer: network protocol and offset of the IP header (-1: leave the record to the numpy path). */
static inline int link_layer(const uint8_t *p, int64_t cap, int32_t link, int *proto) {
    int off;
    switch (link) {
    case 1: {
        if (cap < 14) return -1;
        int pr = be16(p + 12);
        off = 14;
        for (int k = 0; k < 3 && (pr == 0x8100 || pr == 0x88A8 || pr == 0x9100); k++) {
            if (cap < off + 4) return -1;
            pr = be16(p + off + 2);
            off += 4;
        }
        *proto = pr;
        return off;
    }
    case 113:
        if (cap < 16) return -1;
        *proto = be16(p + 14);
        return 16;
    case 276:
        if (cap < 20) return -1;
        *proto = be16(p);
        return 20;
    case 9:
    case 50: {
        if (cap < 4) return -1;
        int hdlc = p[0] == 0xFF && p[1] == 0x03;
        int pp = be16(p + (hdlc ? 2 : 0));
        *proto = pp == 0x0021 ? ETH_IPV4 : pp == 0x0057 ? ETH_IPV6 : 0;
        return hdlc ? 4 : 2;
    }
    case 12: case 14: case 101: case 228: case 229: {
        if (cap < 1) return -1;
        int v = p[0] >> 4;
        *proto = v == 4 ? ETH_IPV4 : v == 6 ? ETH_IPV6 : 0;
        return 0;
    }
    case 0:
    case 108: {
        if (cap < 4) return -1;
        int64_t be = ((int64_t)p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
        int64_t le = ((int64_t)p[3] << 24) | (p[2] << 16) | (p[1] << 8) | p[0];
        int64_t fam = link == 108 ? be : (le < 65536 ? le : be);
        *proto = fam == 2 ? ETH_IPV4 : (fam == 10 || fam == 23 || fam == 24 || fam == 28 || fam == 30) ? ETH_IPV6 : 0;
        return 4;
    }
    default:
        return -1;
    }
}

/* decode(buf, data_offset, cap, wire, link, snap, outs, fallback) -> (n_fast, options_truncated, payload_beyond) */
static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer bb, bo, bc, bw, bl, bs, bf;
    PyObject *outs;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*Ow*", &bb, &bo, &bc, &bw, &bl, &bs, &outs, &bf)) return NULL;
    Py_buffer o[N_OUT];
    int got = 0, ok = 1;
    if (!PyTuple_Check(outs) || PyTuple_GET_SIZE(outs) != N_OUT) {
        PyErr_SetString(PyExc_ValueError, "outs must be a tuple of 35 writable arrays");
        ok = 0;
    }
    while (ok && got < N_OUT) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(outs, got), &o[got], PyBUF_WRITABLE) < 0) ok = 0;
        else got++;
    }
    Py_ssize_t n = bo.len / 8;
    Py_ssize_t nf = 0;
    long long opt_trunc = 0, beyond_count = 0;
    if (ok && (bc.len / 4 < n || bw.len / 4 < n || bl.len / 4 < n || bs.len / 4 < n || bf.len < n)) {
        PyErr_SetString(PyExc_ValueError, "record arrays shorter than data_offset");
        ok = 0;
    }
    for (int k = 0; ok && k < N_OUT; k++)
        if (o[k].len < n * OUT_SIZE[k]) {
            PyErr_Format(PyExc_ValueError, "output array %d holds %zd bytes, needs %zd", k, o[k].len,
                         n * OUT_SIZE[k]);
            ok = 0;
        }
    if (ok) {
        const uint8_t *buf = (const uint8_t *)bb.buf;
        const int64_t *doff_a = (const int64_t *)bo.buf;
        const uint32_t *cap_a = (const uint32_t *)bc.buf, *wire_a = (const uint32_t *)bw.buf,
                       *snap_a = (const uint32_t *)bs.buf;
        const int32_t *link_a = (const int32_t *)bl.buf;
        uint8_t *fb = (uint8_t *)bf.buf;
        Py_ssize_t buflen = bb.len;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            fb[i] = 1;
            int64_t start = doff_a[i], cap = cap_a[i], wire = wire_a[i];
            if (start < 0 || start + cap + 64 > buflen) continue;  /* the numpy path reports it */
            const uint8_t *p = buf + start;
            int proto = 0;
            int l3 = link_layer(p, cap, link_a[i], &proto);
            if (l3 < 0) continue;
            int64_t wire_len = wire > cap ? wire : cap; /* wire_end - start */
            const uint8_t *ip = p + l3;
            int64_t l4, l4_total;
            int is4;
            uint64_t shi, slo, dhi, dlo;
            uint32_t ipid;
            if (proto == ETH_IPV4) {
                if (cap < l3 + 20 || (ip[0] >> 4) != 4) continue;
                int ihl = (ip[0] & 0x0F) * 4;
                int64_t tot = be16(ip + 2);
                if (ihl < 20 || (tot != 0 && tot < ihl)) continue;
                if ((be16(ip + 6) & 0x3FFF) != 0 || ip[9] != 6) continue;
                if (tot == 0) tot = wire_len - l3;
                l4 = l3 + ihl;
                l4_total = tot - ihl;
                is4 = 1;
                shi = dhi = 0;
                slo = be32(ip + 12);
                dlo = be32(ip + 16);
                ipid = be16(ip + 4);
            } else if (proto == ETH_IPV6) {
                if (cap < l3 + 40 || (ip[0] >> 4) != 6 || ip[6] != 6) continue;
                l4 = l3 + 40;
                l4_total = be16(ip + 4);
                is4 = 0;
                shi = be64(ip + 8);
                slo = be64(ip + 16);
                dhi = be64(ip + 24);
                dlo = be64(ip + 32);
                ipid = 0;
            } else {
                continue;
            }
            if (cap < l4 + 20) continue;
            const uint8_t *t = p + l4;
            int64_t doff = (t[12] >> 4) * 4;
            int64_t payload = l4_total - doff;
            if (doff < 20 || payload < 0) continue;
            /* an option walk reads at most 41 bytes past its start, inside the padding */
            int64_t room = wire_len - l4 - doff;
            if (room < 0) room = 0;
            int64_t snap = snap_a[i];
            int wire_unknown = snap > 0 && cap == snap && wire == cap;
            if (payload > room && !wire_unknown) {
                payload = room;
                beyond_count++;
            }
            int64_t opt_end = l4 + doff;
            if (opt_end > cap) {
                opt_trunc++;
                opt_end = cap;
            }
            /* ------- options */
            int32_t mss = -1;
            int8_t ws = -1, mpsub = -1, mpver = -1;
            uint8_t sackp = 0, sackn = 0, hasts = 0, hasdsn = 0, hasdack = 0, seen_sack = 0, seen_key = 0,
                    seen_tok = 0;
            uint32_t sackl = 0, sackr = 0, tsval = 0, tsecr = 0, rtok = 0, sseq = 0;
            uint16_t dlen = 0;
            uint64_t skey = 0, rkey = 0, dsn = 0, dack = 0;
            int64_t pos = l4 + 20, lim = opt_end;
            if (pos < lim) {
                for (int step = 0; step < 40; step++) {
                    int kind = p[pos], len = p[pos + 1];
                    if (kind == 0) break;
                    if (kind == 1) {
                        len = 1;
                    } else {
                        if (len < 2 || pos + len > lim || pos + 1 >= lim) break;
                        const uint8_t *q = p + pos;
                        if (kind == 2 && len == 4) {
                            if (mss < 0) mss = be16(q + 2);
                        } else if (kind == 3 && len == 3) {
                            if (ws < 0) ws = q[2];
                        } else if (kind == 4) {
                            sackp = 1;
                        } else if (kind == 5 && len >= 10) {
                            if (!seen_sack) {
                                sackn = (len - 2) / 8;
                                sackl = be32(q + 2);
                                sackr = be32(q + 6);
                                seen_sack = 1;
                            }
                        } else if (kind == 8 && len == 10) {
                            if (!hasts) {
                                hasts = 1;
                                tsval = be32(q + 2);
                                tsecr = be32(q + 6);
                            }
                        } else if (kind == 30 && len >= 3) {
                            int sub = q[2] >> 4;
                            if (mpsub < 0) mpsub = (int8_t)sub;
                            if (sub == 0) {
                                if (mpver < 0) mpver = q[2] & 0x0F;
                                if (len >= 12 && !seen_key) {
                                    skey = be64(q + 4);
                                    if (len >= 20) rkey = be64(q + 12);
                                    if (len >= 22) dlen = be16(q + 20);
                                    seen_key = 1;
                                }
                            } else if (sub == 7) {
                                if (len >= 12 && !seen_key) {
                                    rkey = be64(q + 4);
                                    seen_key = 1;
                                }
                            } else if (sub == 1) {
                                if (len == 12 && !seen_tok) {
                                    rtok = be32(q + 4);
                                    seen_tok = 1;
                                }
                            } else if (sub == 2) {
                                int fl = q[3];
                                int ack_len = (fl & 1) ? ((fl & 2) ? 8 : 4) : 0;
                                int map_len = (fl & 4) ? (((fl & 8) ? 8 : 4) + 6) : 0;
                                if (4 + ack_len + map_len <= len) {
                                    if ((fl & 1) && !hasdack) {
                                        dack = (fl & 2) ? be64(q + 4) : be32(q + 4);
                                        hasdack = 1;
                                    }
                                    if ((fl & 4) && !hasdsn) {
                                        const uint8_t *r = q + 4 + ack_len;
                                        dsn = (fl & 8) ? be64(r) : be32(r);
                                        r += (fl & 8) ? 8 : 4;
                                        sseq = be32(r);
                                        dlen = be16(r + 4);
                                        hasdsn = 1;
                                    }
                                }
                            }
                        }
                    }
                    pos += len;
                    if (pos >= lim) break;
                }
            }
            /* ------- write the row */
            Py_ssize_t k = nf++;
            fb[i] = 0;
            OUT(int64_t, O_ROWS)[k] = i;
            OUT(uint8_t, O_VER)[k] = is4 ? 4 : 6;
            OUT(uint64_t, O_SRC_HI)[k] = shi;
            OUT(uint64_t, O_SRC_LO)[k] = slo;
            OUT(uint64_t, O_DST_HI)[k] = dhi;
            OUT(uint64_t, O_DST_LO)[k] = dlo;
            OUT(uint32_t, O_IPID)[k] = ipid;
            OUT(uint16_t, O_SPORT)[k] = (uint16_t)be16(t);
            OUT(uint16_t, O_DPORT)[k] = (uint16_t)be16(t + 2);
            OUT(uint32_t, O_SEQ)[k] = be32(t + 4);
            OUT(uint32_t, O_ACK)[k] = be32(t + 8);
            OUT(uint16_t, O_FLAGS)[k] = (uint16_t)(((t[12] & 1) << 8) | t[13]);
            OUT(uint16_t, O_WIN)[k] = (uint16_t)be16(t + 14);
            OUT(uint8_t, O_DOFF)[k] = (uint8_t)doff;
            OUT(uint32_t, O_PAYLOAD)[k] = (uint32_t)payload;
            OUT(int32_t, O_MSS)[k] = mss;
            OUT(int8_t, O_WS)[k] = ws;
            OUT(uint8_t, O_SACKP)[k] = sackp;
            OUT(uint8_t, O_SACKN)[k] = sackn;
            OUT(uint32_t, O_SACKL)[k] = sackl;
            OUT(uint32_t, O_SACKR)[k] = sackr;
            OUT(uint8_t, O_HASTS)[k] = hasts;
            OUT(uint32_t, O_TSVAL)[k] = tsval;
            OUT(uint32_t, O_TSECR)[k] = tsecr;
            OUT(int8_t, O_MPSUB)[k] = mpsub;
            OUT(int8_t, O_MPVER)[k] = mpver;
            OUT(uint64_t, O_SKEY)[k] = skey;
            OUT(uint64_t, O_RKEY)[k] = rkey;
            OUT(uint32_t, O_RTOK)[k] = rtok;
            OUT(uint8_t, O_HASDSN)[k] = hasdsn;
            OUT(uint64_t, O_DSN)[k] = dsn;
            OUT(uint32_t, O_SSEQ)[k] = sseq;
            OUT(uint16_t, O_DLEN)[k] = dlen;
            OUT(uint8_t, O_HASDACK)[k] = hasdack;
            OUT(uint64_t, O_DACK)[k] = dack;
        }
        Py_END_ALLOW_THREADS
    }
    for (int k = 0; k < got; k++) PyBuffer_Release(&o[k]);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&bo);
    PyBuffer_Release(&bc);
    PyBuffer_Release(&bw);
    PyBuffer_Release(&bl);
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bf);
    if (!ok) return NULL;
    return Py_BuildValue("nLL", nf, opt_trunc, beyond_count);
}

static PyMethodDef methods[] = {
    {"walk_classic", walk_classic, METH_VARARGS, "Walk the records of a classic pcap chunk."},
    {"decode", decode, METH_VARARGS, "Decode the common-case TCP records of a batch; flag the others."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ckernel",
                                    "Compiled per-record loops of the native pcap reader.", -1, methods};

PyMODINIT_FUNC PyInit_ckernel(void) { return PyModule_Create(&module); }
