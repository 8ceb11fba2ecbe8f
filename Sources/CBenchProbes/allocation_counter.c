/* Counting allocator front: see bench_probes.h. */
#define _GNU_SOURCE
#include "bench_probes.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

/* Under AddressSanitizer or ThreadSanitizer the sanitizer's runtime owns malloc: defining it here would take its
   place. Nothing is interposed there, and the count is reported as unavailable. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TC_NO_INTERPOSER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TC_NO_INTERPOSER 1
#endif

static __thread uint64_t thread_allocations;

uint64_t tc_thread_allocations(void) { return thread_allocations; }

#ifdef TC_NO_INTERPOSER
int tc_allocations_counted(void) { return 0; }
#else
int tc_allocations_counted(void) { return 1; }

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_memalign)(size_t, size_t);

/* dlsym may allocate (its error state) while the pointers above are being resolved: those few requests are
   served from this static arena and never freed back to the C library. */
static _Alignas(16) unsigned char bootstrap_arena[8192];
static size_t bootstrap_used;
static int resolving;

static int in_bootstrap_arena(const void *pointer) {
    return (const unsigned char *)pointer >= bootstrap_arena
        && (const unsigned char *)pointer < bootstrap_arena + sizeof bootstrap_arena;
}

static void *bootstrap_allocate(size_t size) {
    size_t rounded = size == 0 ? 16 : (size + 15) & ~(size_t)15; /* distinct blocks, even of size 0 */
    if (rounded < size || rounded > sizeof bootstrap_arena - bootstrap_used) return NULL;
    void *block = bootstrap_arena + bootstrap_used;
    bootstrap_used += rounded;
    return block; /* static storage: already zeroed, as calloc requires */
}

/* Resolved once, on the first allocation, which the dynamic loader makes while the process is still single-threaded. */
static void resolve(void) {
    resolving = 1;
    next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    next_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    next_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    next_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    resolving = 0;
}

void *malloc(size_t size) {
    if (!next_malloc) {
        if (resolving) return bootstrap_allocate(size);
        resolve();
    }
    thread_allocations++;
    return next_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (!next_calloc) {
        if (resolving) {
            if (size != 0 && count > (size_t)-1 / size) return NULL;
            return bootstrap_allocate(count * size);
        }
        resolve();
    }
    thread_allocations++;
    return next_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (!next_realloc) {
        if (resolving) return pointer ? NULL : bootstrap_allocate(size);
        resolve();
    }
    if (pointer && in_bootstrap_arena(pointer)) {
        /* A bootstrap block's size is not recorded: copy what fits from it (the arena is contiguous). */
        void *moved = malloc(size);
        if (moved) {
            size_t available = (size_t)(bootstrap_arena + sizeof bootstrap_arena - (unsigned char *)pointer);
            memcpy(moved, pointer, size < available ? size : available);
        }
        return moved;
    }
    thread_allocations++;
    return next_realloc(pointer, size);
}

void free(void *pointer) {
    if (!pointer || in_bootstrap_arena(pointer)) return;
    if (!next_free) {
        if (resolving) return; /* only bootstrap blocks exist before resolution ends */
        resolve();
    }
    next_free(pointer);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (!next_posix_memalign) {
        if (resolving) return ENOMEM;
        resolve();
    }
    thread_allocations++;
    return next_posix_memalign(result, alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (!next_aligned_alloc) {
        if (resolving) return NULL;
        resolve();
    }
    thread_allocations++;
    return next_aligned_alloc(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    if (!next_memalign) {
        if (resolving) return NULL;
        resolve();
    }
    thread_allocations++;
    return next_memalign(alignment, size);
}
#endif
