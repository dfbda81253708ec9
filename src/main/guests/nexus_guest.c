/*
 * NexusCore reference tier guest: the canonical-ABI lowering of the `tier-worker` world in
 * src/main/wit/nexus-tier.wit (read that file first; it is the contract this code implements).
 *
 * One C core for the three tiers; build.sh compiles it three times with -DNX_TIER=0|1|2, which
 * changes only the guest's name and completion budget. No libc calls and no WASI: the only imports
 * are the memory and the two host functions of `nexus:tier/host`. Token counts are cl100k_base
 * (cl100k.c, over tables generated from jtokkit at build time).
 */
#include <stddef.h>
#include <stdint.h>

#include "cl100k.h"

#ifndef NX_TIER
#error "build with -DNX_TIER=0 (nano), 1 (small) or 2 (large)"
#endif

#if NX_TIER == 0
#define NX_NAME "nano"
#define NX_BUDGET 8u
#elif NX_TIER == 1
#define NX_NAME "small"
#define NX_BUDGET 32u
#else
#define NX_NAME "large"
#define NX_BUDGET 128u
#endif

#define NX_MAX_SCORE 255u

#define WASM_PAGE 65536ull
#define WASM32_MAX_PAGES 65536ull
#define SIM_CHUNK 65536u

#define HOST_IMPORT(n) __attribute__((import_module("nexus:tier/host@0.1.0"), import_name(n)))
HOST_IMPORT("now-ns") uint64_t nx_now_ns(void);
HOST_IMPORT("memory-exhausted") void nx_memory_exhausted(uint32_t requested_pages);

/* ---- allocator: a bump heap over the imported memory, reset after every call ---------------- */

extern unsigned char __heap_base;

/* 64-bit so that the end of a full 4 GiB memory (2^32) does not wrap. */
static uint64_t heap_top;

static uint64_t heap_start(void) {
    return (uint64_t)(uintptr_t)&__heap_base;
}

/*
 * Heap room every instance starts with. The host restores an instance to its image after each call
 * and replaces it instead when the call grew memory (memory cannot shrink); without this reserve the
 * room above __heap_base was whatever the data's last page happened to leave (0 to 64 KiB), and a
 * change of the tables' size could make every ordinary request grow memory and cost a fresh instance.
 * Grown by the reactor's _initialize, so it is part of the image (zero pages: the reset after a call
 * copies only what the call wrote). 512 KiB holds a 16 KB prompt's token-count scratch (20 bytes per
 * prompt byte, cl100k.h) with its request and answer; a longer prompt still grows and is replaced.
 */
#define HEAP_RESERVE (512ull * 1024ull)

__attribute__((constructor)) static void reserve_heap(void) {
    uint64_t want = heap_start() + HEAP_RESERVE;
    uint64_t have = (uint64_t)__builtin_wasm_memory_size(0) * WASM_PAGE;
    if (want > have) {
        /* A ceiling below the reserve leaves less room: requests then grow (or hit the ceiling) as before. */
        (void)__builtin_wasm_memory_grow(0, (size_t)((want - have + WASM_PAGE - 1) / WASM_PAGE));
    }
}

/* Never returns NULL: when memory cannot grow it tells the host why and traps, so a runaway
 * request ends the call instead of corrupting the heap. */
static void *nx_alloc(uint64_t size, uint64_t align) {
    if (heap_top == 0) {
        heap_top = heap_start();
    }
    uint64_t p = (heap_top + align - 1) & ~(align - 1);
    uint64_t end = p + size;
    uint64_t have = (uint64_t)__builtin_wasm_memory_size(0) * WASM_PAGE;
    if (end > have) {
        uint64_t need = (end - have + WASM_PAGE - 1) / WASM_PAGE;
        if (need > WASM32_MAX_PAGES || __builtin_wasm_memory_grow(0, (size_t)need) == (size_t)-1) {
            nx_memory_exhausted(need > UINT32_MAX ? UINT32_MAX : (uint32_t)need);
            __builtin_trap();
        }
    }
    heap_top = end;
    return (void *)(uintptr_t)p;
}

__attribute__((export_name("cabi_realloc")))
void *cabi_realloc(void *old_ptr, size_t old_size, size_t align, size_t new_size) {
    if (align == 0 || (align & (align - 1)) != 0) {
        __builtin_trap();
    }
    unsigned char *p = nx_alloc(new_size, align);
    if (old_ptr != NULL) {
        size_t n = old_size < new_size ? old_size : new_size;
        for (size_t i = 0; i < n; i++) {
            p[i] = ((unsigned char *)old_ptr)[i];
        }
    }
    return p;
}

/* ---- tokens -------------------------------------------------------------------------------- */

static int is_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_word(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

/* The completion echoes the prompt's first words: a word is a run of word bytes, or one other
 * non-space byte. Returns the index just past the word starting at s[i] (s[i] is not whitespace). */
static size_t token_end(const unsigned char *s, size_t len, size_t i) {
    if (!is_word(s[i])) {
        return i + 1;
    }
    while (i < len && is_word(s[i])) {
        i++;
    }
    return i;
}

/* cl100k_base tokens in s[0..len). The scratch is released at once (the heap is a bump allocator):
 * the prompt's and the answer's counts reuse the same pages. */
static uint32_t count_tokens(const unsigned char *s, size_t len) {
    void *scratch = nx_alloc(NX_CL100K_SCRATCH(len), 8);
    uint32_t n = nx_cl100k_count(s, len, scratch);
    heap_top = (uint64_t)(uintptr_t)scratch;
    return n;
}

/* ---- assessment ---------------------------------------------------------------------------- */

/* The scorer's keyword policy (io.nexuscore.classify.Scorer): each of sum, ref, gen, ana adds its
 * weight once when it occurs, ASCII case-insensitive, in the task name (the request line's task) or
 * in the first keyword_scan_bytes bytes of the prompt. */
static int has_keyword(const unsigned char *s, size_t len, const char *kw) {
    for (size_t i = 0; i + 2 < len; i++) {
        if ((s[i] | 0x20) == kw[0] && (s[i + 1] | 0x20) == kw[1] && (s[i + 2] | 0x20) == kw[2]) {
            return 1;
        }
    }
    return 0;
}

static uint32_t keyword_bonus(const unsigned char *task, size_t task_len, const unsigned char *prompt,
                              size_t prompt_len, const uint32_t weights[4], uint32_t scan_bytes) {
    static const char *const keywords[4] = {"sum", "ref", "gen", "ana"};
    size_t scanned = prompt_len < scan_bytes ? prompt_len : scan_bytes;
    uint32_t bonus = 0;
    for (int k = 0; k < 4; k++) {
        if (has_keyword(task, task_len, keywords[k]) || has_keyword(prompt, scanned, keywords[k])) {
            bonus += weights[k] > NX_MAX_SCORE ? NX_MAX_SCORE : weights[k];
        }
    }
    return bonus;
}

/* ---- simulation ---------------------------------------------------------------------------- */

/* Allocates `bytes` in 64 KiB chunks, writes one byte per chunk and reads them all back: real growth
 * the optimiser cannot remove (the checksum reaches the answer). A chunk is one Wasm page, so it never
 * needs more than one page of growth: a runaway allocation fails exactly when memory is at its
 * maximum. Chunks are 16-aligned multiples of 16, so they lie back to back from `first`. They are
 * released before the answer is built. */
static uint32_t simulate_alloc(uint64_t bytes) {
    uint64_t mark = heap_top;
    uint32_t sum = 0;
    volatile unsigned char *first = NULL;
    uint64_t chunks = (bytes + SIM_CHUNK - 1) / SIM_CHUNK;
    for (uint64_t i = 0; i < chunks; i++) {
        volatile unsigned char *c = nx_alloc(SIM_CHUNK, 16);
        if (first == NULL) {
            first = c;
        }
        c[0] = (unsigned char)(i * 31u + 7u);
    }
    for (uint64_t i = 0; i < chunks; i++) {
        sum = sum * 33u + first[i * SIM_CHUNK];
    }
    heap_top = mark;
    return sum;
}

/* Where simulate_work leaves its result, so the optimiser keeps the work it stands for. */
static volatile uint32_t work_sink;

static void simulate_work(uint32_t ms) {
    uint64_t end = nx_now_ns() + (uint64_t)ms * 1000000ull;
    uint32_t x = 2166136261u;
    while (nx_now_ns() < end) {
        for (int i = 0; i < 256; i++) {
            x = (x ^ (uint32_t)i) * 16777619u;
        }
    }
    work_sink = x;
}

static void simulate_spin(void) {
    volatile uint32_t forever = 0;
    for (;;) {
        forever++;
    }
}

/* ---- answer -------------------------------------------------------------------------------- */

typedef struct {
    unsigned char *p;
    size_t len;
} buf_t;

static void put(buf_t *b, const void *src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        b->p[b->len + i] = ((const unsigned char *)src)[i];
    }
    b->len += n;
}

static void put_str(buf_t *b, const char *s) {
    size_t n = 0;
    while (s[n] != 0) {
        n++;
    }
    put(b, s, n);
}

static void put_u32(buf_t *b, uint32_t v) {
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) {
        put(b, &tmp[--n], 1);
    }
}

/* The return area of `handle` (see the WIT file): 24 bytes, align 4. */
typedef struct {
    uint32_t text_ptr;
    uint32_t text_len;
    uint32_t prompt_tokens;
    uint32_t completion_tokens;
    uint32_t observed_score;
    uint8_t observed_tier;
} response_t;
_Static_assert(sizeof(response_t) == 24, "return area is 24 bytes");
_Static_assert(_Alignof(response_t) == 4, "return area is 4-aligned");

__attribute__((export_name("handle")))
response_t *handle(const unsigned char *task, size_t task_len, const unsigned char *prompt, size_t prompt_len,
                   uint32_t max_tokens, uint32_t work_ms, uint64_t allocate_bytes, uint32_t spin,
                   uint32_t nano_max, uint32_t small_max, uint32_t weight_sum, uint32_t weight_ref,
                   uint32_t weight_gen, uint32_t weight_ana, uint32_t keyword_scan_bytes) {
    uint32_t checksum = 0;
    if (allocate_bytes > 0) {
        checksum = simulate_alloc(allocate_bytes);
    }
    if (work_ms > 0) {
        simulate_work(work_ms);
    }
    if (spin) {
        simulate_spin();
    }

    /* The guest's own assessment: the score the kernel estimates, computed from the true count. */
    uint32_t prompt_tokens = count_tokens(prompt, prompt_len);
    const uint32_t weights[4] = {weight_sum, weight_ref, weight_gen, weight_ana};
    uint64_t score = (uint64_t)prompt_tokens
                     + keyword_bonus(task, task_len, prompt, prompt_len, weights, keyword_scan_bytes);
    if (score > NX_MAX_SCORE) {
        score = NX_MAX_SCORE;
    }
    uint8_t tier = score <= nano_max ? 0 : score <= small_max ? 1 : 2;
    uint32_t budget = max_tokens == 0 || max_tokens > NX_BUDGET ? NX_BUDGET : max_tokens;

    buf_t text = {nx_alloc(task_len + prompt_len + 64, 1), 0};
    put_str(&text, "[" NX_NAME "] ");
    put(&text, task, task_len);
    put_str(&text, ":");
    uint32_t taken = 0;
    size_t i = 0;
    int pending_space = 1;
    while (i < prompt_len && taken < budget) {
        if (is_space(prompt[i])) {
            pending_space = 1;
            i++;
            continue;
        }
        size_t end = token_end(prompt, prompt_len, i);
        if (pending_space) {
            put_str(&text, " ");
            pending_space = 0;
        }
        put(&text, prompt + i, end - i);
        i = end;
        taken++;
    }
    while (i < prompt_len && is_space(prompt[i])) {
        i++;
    }
    if (i < prompt_len) {
        put_str(&text, " ...");
    }
    if (allocate_bytes > 0) {
        put_str(&text, " [touched ");
        put_u32(&text, checksum);
        put_str(&text, "]");
    }

    response_t *r = nx_alloc(sizeof(response_t), _Alignof(response_t));
    r->text_ptr = (uint32_t)(uintptr_t)text.p;
    r->text_len = (uint32_t)text.len;
    r->prompt_tokens = prompt_tokens;
    r->completion_tokens = count_tokens(text.p, text.len);
    r->observed_score = (uint32_t)score;
    r->observed_tier = tier;
    return r;
}

__attribute__((export_name("cabi_post_handle")))
void cabi_post_handle(response_t *ret) {
    (void)ret;
    heap_top = heap_start();
}
