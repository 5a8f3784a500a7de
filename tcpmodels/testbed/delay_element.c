/*
 * tcpmodels delay element: bridges two network interfaces with AF_PACKET
 * sockets and releases every frame a fixed time after it arrived, in both
 * directions, optionally dropping frames at random.  It stands in for netem,
 * which this kernel does not have.
 *
 * usage: delay_element IF_A IF_B DELAY_US [LOSS_PROB [SEED [QUEUE_FRAMES]]]
 *
 * Frames are read from IF_A and written to IF_B after DELAY_US microseconds,
 * and the other way round.  Each direction keeps a FIFO of frames (a constant
 * delay keeps arrival order, so a FIFO is time-ordered).  The loop sleeps
 * with ppoll() until the next frame is due or a frame arrives.  On SIGINT or
 * SIGTERM the element prints one JSON line with its counters and exits 0; on
 * SIGUSR1 it prints the same line (the counters so far) and goes on, so a
 * caller can read what it dropped during one transfer without stopping it.
 *
 * Offloads (checksum, TSO, GSO, GRO) must be off on both interfaces and on
 * their veth peers, otherwise frames are larger than the MTU or carry
 * partial checksums.  Frames longer than SLOT_BYTES are counted and dropped.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SLOT_BYTES 2048
#define RCVBUF_BYTES (32 * 1024 * 1024)
#define BATCH 64
/* a frame due within this much is released now rather than after another sleep */
#define RELEASE_SLACK_NS 2000
/* upper bound of the learned wake-up latency */
#define MAX_WAKE_LEAD_NS 300000

struct slot {
    uint64_t due_ns;
    uint32_t len;
    unsigned char data[SLOT_BYTES];
};

struct direction {
    int in_fd, out_fd;
    struct slot *ring;
    uint64_t head, tail; /* tail - head frames queued */
    uint64_t received, forwarded, dropped_loss, dropped_full,
        dropped_oversize, send_errors;
};

static volatile sig_atomic_t stop_requested = 0, dump_requested = 0;
static void on_signal(int sig) {
    if (sig == SIGUSR1) dump_requested = 1;
    else stop_requested = 1;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: a small seeded generator for the loss decision */
static uint64_t rng_state = 88172645463325252ull;
static double rng_uniform(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int open_bound(const char *ifname) {
    unsigned int ifindex = if_nametoindex(ifname);
    if (ifindex == 0) {
        fprintf(stderr, "delay_element: no interface %s: %s\n", ifname, strerror(errno));
        exit(2);
    }
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
    if (fd < 0) {
        fprintf(stderr, "delay_element: AF_PACKET socket: %s (needs CAP_NET_RAW)\n", strerror(errno));
        exit(2);
    }
    int size = RCVBUF_BYTES;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    int one = 1;
    /* never read back the frames this element itself sends */
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one); /* kernel arrival time */
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof sll);
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = (int)ifindex;
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) {
        fprintf(stderr, "delay_element: bind %s: %s\n", ifname, strerror(errno));
        exit(2);
    }
    return fd;
}

static uint64_t queue_frames = 65536;
static double loss_prob = 0.0;
static uint64_t delay_ns = 0;
static uint64_t wake_lead_ns = 0;

/* CLOCK_REALTIME minus CLOCK_MONOTONIC, to turn kernel receive timestamps
   (realtime) into the monotonic clock the release schedule uses */
static int64_t realtime_offset_ns(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_REALTIME, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((int64_t)a.tv_sec - (int64_t)b.tv_sec) * 1000000000ll + ((int64_t)a.tv_nsec - (int64_t)b.tv_nsec);
}

/* read one frame with its kernel arrival time (monotonic ns); returns length or -1 */
static ssize_t read_frame(int fd, unsigned char *buf, size_t size, struct sockaddr_ll *from,
                          uint64_t *arrival_ns, int64_t offset) {
    struct iovec iov = {.iov_base = buf, .iov_len = size};
    char control[64];
    struct msghdr msg = {.msg_name = from, .msg_namelen = sizeof *from, .msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = control, .msg_controllen = sizeof control};
    ssize_t n = recvmsg(fd, &msg, MSG_TRUNC);
    if (n < 0) return -1;
    *arrival_ns = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            *arrival_ns = (uint64_t)((int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec - offset);
        }
    }
    uint64_t t = now_ns();
    /* fall back to the read time if the stamp is missing or implausible */
    if (*arrival_ns == 0 || *arrival_ns > t || t - *arrival_ns > 1000000000ull) *arrival_ns = t;
    return n;
}

static void receive(struct direction *d) {
    int64_t offset = realtime_offset_ns();
    for (int i = 0; i < BATCH; i++) {
        struct sockaddr_ll from;
        uint64_t arrival;
        if (d->tail - d->head >= queue_frames) {
            /* queue full: read and drop so the socket does not back up */
            unsigned char scratch[SLOT_BYTES];
            ssize_t n = read_frame(d->in_fd, scratch, sizeof scratch, &from, &arrival, offset);
            if (n < 0) return;
            if (from.sll_pkttype == PACKET_OUTGOING) continue;
            d->received++;
            d->dropped_full++;
            continue;
        }
        struct slot *s = &d->ring[d->tail % queue_frames];
        ssize_t n = read_frame(d->in_fd, s->data, SLOT_BYTES, &from, &arrival, offset);
        if (n < 0) return; /* EAGAIN: nothing more now */
        if (from.sll_pkttype == PACKET_OUTGOING) continue;
        d->received++;
        if (n > SLOT_BYTES) { d->dropped_oversize++; continue; }
        if (loss_prob > 0.0 && rng_uniform() < loss_prob) { d->dropped_loss++; continue; }
        s->len = (uint32_t)n;
        s->due_ns = arrival + delay_ns;
        d->tail++;
    }
}

static void release(struct direction *d, uint64_t t) {
    while (d->head != d->tail) {
        struct slot *s = &d->ring[d->head % queue_frames];
        if (s->due_ns > t + RELEASE_SLACK_NS) return;
        if (send(d->out_fd, s->data, s->len, 0) < 0) {
            if (errno == EAGAIN || errno == ENOBUFS) return; /* retry on the next pass */
            d->send_errors++;
        } else {
            d->forwarded++;
        }
        d->head++;
    }
}

static void print_stats(const char *name, const struct direction *d, int last) {
    /* frames the kernel dropped because this element's receive buffer was full */
    struct tpacket_stats st = {0};
    socklen_t len = sizeof st;
    getsockopt(d->in_fd, SOL_PACKET, PACKET_STATISTICS, &st, &len);
    printf("\"%s\": {\"received\": %llu, \"forwarded\": %llu, \"dropped_loss\": %llu, "
           "\"dropped_queue_full\": %llu, \"dropped_oversize\": %llu, \"send_errors\": %llu, "
           "\"dropped_socket\": %u}%s",
           name, (unsigned long long)d->received, (unsigned long long)d->forwarded,
           (unsigned long long)d->dropped_loss, (unsigned long long)d->dropped_full,
           (unsigned long long)d->dropped_oversize, (unsigned long long)d->send_errors, st.tp_drops,
           last ? "" : ", ");
}

/* one JSON line: the parameters and both directions' counters so far */
static void print_counters(const struct direction *dirs) {
    printf("{\"delay_us\": %.3f, \"loss\": %g, \"wake_lead_us\": %.1f, ", delay_ns / 1000.0, loss_prob,
           wake_lead_ns / 1000.0);
    print_stats("a_to_b", &dirs[0], 0);
    print_stats("b_to_a", &dirs[1], 1);
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s IF_A IF_B DELAY_US [LOSS_PROB [SEED [QUEUE_FRAMES]]]\n", argv[0]);
        return 2;
    }
    delay_ns = (uint64_t)(strtod(argv[3], NULL) * 1000.0);
    if (argc > 4) loss_prob = strtod(argv[4], NULL);
    if (argc > 5) rng_state = strtoull(argv[5], NULL, 10) * 2654435761ull + 1;
    if (argc > 6) queue_frames = strtoull(argv[6], NULL, 10);
    if (loss_prob < 0.0 || loss_prob >= 1.0 || queue_frames == 0) {
        fprintf(stderr, "delay_element: loss must be in [0, 1) and queue > 0\n");
        return 2;
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* wake up on time, not 50 us late */
    /* a real-time priority keeps busy CPUs from delaying the release of frames;
       the loop never spins, so it cannot starve the machine (ignored if refused) */
    struct sched_param sp = {.sched_priority = 10};
    int realtime = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    /* the signals are blocked except inside ppoll(), which unblocks them atomically: one
       that arrives while the loop runs waits for the next ppoll() and ends it at once,
       instead of being noticed only after the next frame or timeout (never, when idle) */
    sigset_t handled, unblocked;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGUSR1);
    sigprocmask(SIG_BLOCK, &handled, &unblocked);

    int fa = open_bound(argv[1]), fb = open_bound(argv[2]);
    struct direction dirs[2];
    memset(dirs, 0, sizeof dirs);
    dirs[0].in_fd = fa; dirs[0].out_fd = fb;
    dirs[1].in_fd = fb; dirs[1].out_fd = fa;
    for (int i = 0; i < 2; i++) {
        dirs[i].ring = malloc(sizeof(struct slot) * queue_frames);
        if (!dirs[i].ring) { fprintf(stderr, "delay_element: out of memory\n"); return 2; }
    }
    fprintf(stderr, "delay_element: ready %s <-> %s delay %llu ns loss %g realtime %d\n",
            argv[1], argv[2], (unsigned long long)delay_ns, loss_prob, realtime);

    struct pollfd pfd[2] = {{.fd = fa, .events = POLLIN}, {.fd = fb, .events = POLLIN}};
    while (!stop_requested) {
        if (dump_requested) {
            dump_requested = 0;
            print_counters(dirs);
        }
        uint64_t t = now_ns();
        uint64_t next = UINT64_MAX;
        for (int i = 0; i < 2; i++) {
            release(&dirs[i], t);
            if (dirs[i].head != dirs[i].tail) {
                uint64_t due = dirs[i].ring[dirs[i].head % queue_frames].due_ns;
                if (due < next) next = due;
            }
        }
        /* Sleep until the next frame is due, minus the wake-up latency learned
           so far (an exponential average of how late timed wake-ups were);
           a wake-up that comes early re-polls without sleeping until due. */
        struct timespec ts, *tsp = NULL;
        uint64_t target = 0;
        int timed_sleep = 0;
        if (next != UINT64_MAX) {
            target = next > wake_lead_ns ? next - wake_lead_ns : 0;
            uint64_t wait = target > t ? target - t : 0;
            timed_sleep = wait > 0;
            ts.tv_sec = (time_t)(wait / 1000000000ull);
            ts.tv_nsec = (long)(wait % 1000000000ull);
            tsp = &ts;
        }
        int r = ppoll(pfd, 2, tsp, &unblocked);
        if (r < 0) {
            if (errno == EINTR) continue;
            perror("delay_element: ppoll");
            return 1;
        }
        if (r == 0 && timed_sleep) {
            uint64_t woke = now_ns();
            uint64_t late = woke > target ? woke - target : 0;
            if (late > MAX_WAKE_LEAD_NS) late = MAX_WAKE_LEAD_NS;
            wake_lead_ns = (7 * wake_lead_ns + late) / 8;
        }
        if (pfd[0].revents & POLLIN) receive(&dirs[0]);
        if (pfd[1].revents & POLLIN) receive(&dirs[1]);
    }
    print_counters(dirs);
    return 0;
}
