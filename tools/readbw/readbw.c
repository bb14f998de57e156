/*
 * readbw: how fast this machine streams memory into the cores, the ceiling for a decode step that reads
 * every weight once. N threads each read one contiguous slice of a buffer (anonymous memory advised to
 * transparent huge pages, touched first by the thread that reads it) with the widest vector loads the
 * compiler offers (AVX-512, else AVX2, else SSE2), OR-ed into four independent accumulators so that
 * several loads are in flight. The threads start each pass together (a barrier); a pass lasts from the
 * first thread's start to the last thread's end, and the best pass counts.
 *
 * Build: cc -O2 -march=native -pthread -o readbw readbw.c   (or: make -C tools/readbw)
 * Usage: readbw [THREADS [MIB [PASSES]]]   (defaults 1, 1024, 10)
 * Prints one line: "readbw threads=T bytes=B passes=P best_gbps=G median_gbps=M isa=ISA".
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512i vec;
#define VLOAD(p) _mm512_load_si512((const void *) (p))
#define VOR(a, b) _mm512_or_si512(a, b)
#define VZERO() _mm512_setzero_si512()
#define ISA "avx512"
#elif defined(__AVX2__)
typedef __m256i vec;
#define VLOAD(p) _mm256_load_si256((const __m256i *) (p))
#define VOR(a, b) _mm256_or_si256(a, b)
#define VZERO() _mm256_setzero_si256()
#define ISA "avx2"
#else
typedef __m128i vec;
#define VLOAD(p) _mm_load_si128((const __m128i *) (p))
#define VOR(a, b) _mm_or_si128(a, b)
#define VZERO() _mm_setzero_si128()
#define ISA "sse2"
#endif

#define HUGE_PAGE (2UL << 20)
#define MAX_PASSES 100

struct worker {
    pthread_t thread;
    int index;
    const unsigned char *from;
    size_t bytes;
    uint64_t sink;
    double start[MAX_PASSES]; /* when this thread began and ended each pass */
    double end[MAX_PASSES];
};

static pthread_barrier_t barrier;
static int passes;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t stream(const unsigned char *p, size_t n) {
    const size_t step = 4 * sizeof(vec);
    vec a0 = VZERO(), a1 = VZERO(), a2 = VZERO(), a3 = VZERO();
    for (size_t o = 0; o + step <= n; o += step) {
        a0 = VOR(a0, VLOAD(p + o));
        a1 = VOR(a1, VLOAD(p + o + sizeof(vec)));
        a2 = VOR(a2, VLOAD(p + o + 2 * sizeof(vec)));
        a3 = VOR(a3, VLOAD(p + o + 3 * sizeof(vec)));
    }
    vec a = VOR(VOR(a0, a1), VOR(a2, a3));
    uint64_t lanes[sizeof(vec) / 8];
    memcpy(lanes, &a, sizeof(vec));
    uint64_t r = 0;
    for (size_t i = 0; i < sizeof(vec) / 8; i++) {
        r |= lanes[i];
    }
    return r;
}

static void *run(void *arg) {
    struct worker *w = arg;
    /* first touch by the reading thread */
    memset((void *) w->from, w->index + 1, w->bytes);
    for (int p = 0; p < passes; p++) {
        pthread_barrier_wait(&barrier);
        w->start[p] = now();
        w->sink |= stream(w->from, w->bytes);
        w->end[p] = now();
    }
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static long arg(int argc, char **argv, int i, long fallback, long max, const char *name) {
    if (argc <= i) {
        return fallback;
    }
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 1 || v > max) {
        fprintf(stderr, "readbw: %s must be an integer in 1..%ld, got '%s'\n", name, max, argv[i]);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    int threads = (int) arg(argc, argv, 1, 1, 256, "THREADS");
    size_t mib = (size_t) arg(argc, argv, 2, 1024, 1L << 20, "MIB");
    passes = (int) arg(argc, argv, 3, 10, MAX_PASSES, "PASSES");
    size_t bytes = mib << 20;
    size_t slice = bytes / threads / (4 * sizeof(vec)) * (4 * sizeof(vec));
    unsigned char *raw = mmap(NULL, bytes + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        fprintf(stderr, "readbw: cannot map %zu MiB\n", mib);
        return 1;
    }
    unsigned char *buf = (unsigned char *) (((uintptr_t) raw + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
    madvise(buf, bytes, MADV_HUGEPAGE); /* advice only: without huge pages the loop still runs */
    pthread_barrier_init(&barrier, NULL, threads);
    struct worker *w = calloc(threads, sizeof *w);
    for (int t = 0; t < threads; t++) {
        w[t].index = t;
        w[t].from = buf + t * slice;
        w[t].bytes = slice;
        if (pthread_create(&w[t].thread, NULL, run, &w[t]) != 0) {
            fprintf(stderr, "readbw: cannot start thread %d\n", t);
            return 1;
        }
    }
    uint64_t sink = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(w[t].thread, NULL);
        sink |= w[t].sink;
    }
    /* a pass lasts from the first thread's start to the last thread's end */
    double gbps[MAX_PASSES];
    for (int p = 0; p < passes; p++) {
        double first = w[0].start[p], last = w[0].end[p];
        for (int t = 1; t < threads; t++) {
            first = w[t].start[p] < first ? w[t].start[p] : first;
            last = w[t].end[p] > last ? w[t].end[p] : last;
        }
        gbps[p] = (double) slice * threads / (last - first) / 1e9;
    }
    qsort(gbps, passes, sizeof gbps[0], compare);
    printf("readbw threads=%d bytes=%zu passes=%d best_gbps=%.2f median_gbps=%.2f isa=%s sink=%llx\n", threads,
           slice * threads, passes, gbps[passes - 1], gbps[passes / 2], ISA, (unsigned long long) (sink & 0xff));
    munmap(raw, bytes + HUGE_PAGE);
    return 0;
}
