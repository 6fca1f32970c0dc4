/*
 * Caller regions in, owned jf__live records out. Validation happens here,
 * before the registry lock is taken, so bad input never touches any sink.
 */
#define _POSIX_C_SOURCE 200809L
#include "region.h"

#include "cfi.h"
#include "error.h"
#include "name.h"
#include "region_slab.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The fields every caller has had since the first version. */
#define REGION_V1_SIZE (offsetof(jf_region, cfi) + sizeof(const jf_cfi *))
#define REGION_MAX_STRUCT_SIZE 4096

int jf__region_read(const jf_region *regions, size_t i, jf_region *out)
{
    size_t stride = regions[0].struct_size;
    if (stride < REGION_V1_SIZE || stride > REGION_MAX_STRUCT_SIZE)
        return jf__fail(JF_EINVAL, "jf_region.struct_size is %zu; set it to sizeof(jf_region)", stride);
    const jf_region *r = (const jf_region *)(const void *)((const char *)regions + i * stride);
    if (r->struct_size != stride)
        return jf__fail(JF_EINVAL, "region %zu: struct_size %zu differs from region 0's %zu", i,
                        r->struct_size, stride);
    jf_region init = JF_REGION_INIT;
    *out = init;
    memcpy(out, r, stride < sizeof *out ? stride : sizeof *out);
    out->struct_size = sizeof *out;
    return 0;
}

static int validate_lines(const jf_region *r, size_t index)
{
    if (r->n_lines && !r->lines)
        return jf__fail(JF_EINVAL, "region %zu (%s): n_lines is %zu but lines is NULL", index, r->name,
                        r->n_lines);
    for (size_t k = 0; k < r->n_lines; k++) {
        const jf_line *l = &r->lines[k];
        if (l->offset >= r->size)
            return jf__fail(JF_EINVAL,
                            "region %zu (%s): line entry %zu offset %zu is outside the %zu-byte region",
                            index, r->name, k, l->offset, r->size);
        if (k > 0 && l->offset < r->lines[k - 1].offset)
            return jf__fail(JF_EINVAL, "region %zu (%s): line table is not sorted by offset at entry %zu",
                            index, r->name, k);
        if (!l->file && !r->file)
            return jf__fail(JF_EINVAL, "region %zu (%s): line entry %zu has no file and the region has none",
                            index, r->name, k);
    }
    return 0;
}

int jf__region_validate(const jf_region *r, size_t index)
{
    if (!r->addr)
        return jf__fail(JF_EINVAL, "region %zu: address is NULL", index);
    if (!r->name || !r->name[0])
        return jf__fail(JF_EINVAL, "region %zu at %p: name is NULL or empty", index, r->addr);
    if (r->size == 0)
        return jf__fail(JF_EINVAL, "region %zu (%s): size is 0", index, r->name);
    if ((uintptr_t)r->addr > UINTPTR_MAX - r->size)
        return jf__fail(JF_EINVAL, "region %zu (%s): address + size wraps around", index, r->name);
    int rc = validate_lines(r, index);
    if (rc)
        return rc;
    if (r->cfi && (rc = jf__cfi_validate(r->cfi, r->size)) != 0)
        return rc;
    return 0;
}

static size_t string_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* The line table and its file names in one block owned by the region. */
static jf_line *copy_lines(const jf_region *r)
{
    size_t bytes = r->n_lines * sizeof(jf_line);
    for (size_t k = 0; k < r->n_lines; k++)
        bytes += string_size(r->lines[k].file);
    jf_line *lines = malloc(bytes);
    if (!lines)
        return NULL;
    char *strings = (char *)(lines + r->n_lines);
    for (size_t k = 0; k < r->n_lines; k++) {
        lines[k] = r->lines[k];
        if (r->lines[k].file) {
            size_t n = string_size(r->lines[k].file);
            memcpy(strings, r->lines[k].file, n);
            lines[k].file = strings;
            strings += n;
        }
    }
    return lines;
}

const jf__live_detail jf__no_detail;

/* An empty detail with room for a file name of file_size bytes after it. */
static jf__live_detail *detail_new(size_t file_size)
{
    jf__live_detail *d = jf__slab_alloc(sizeof *d + file_size);
    if (d)
        memset(d, 0, sizeof *d);
    return d;
}

jf__live_detail *jf__live_detail_make(jf__live *r)
{
    if (!r->detail && !(r->detail = detail_new(0)))
        jf__fail(JF_ENOMEM, "out of memory for a sink's note of region %s", r->name);
    return r->detail;
}

static void detail_free(jf__live_detail *d)
{
    if (!d)
        return;
    jf__cfi_free(d->cfi);
    free(d->lines);
    jf__slab_free(d);
}

/* The detail of a region with a file, line, line table or rules: NULL
 * when out of memory (last error set). */
static jf__live_detail *detail_copy(const jf_region *r)
{
    size_t file_size = string_size(r->file);
    jf__live_detail *d = detail_new(file_size);
    if (!d) {
        jf__fail(JF_ENOMEM, "out of memory copying region %s", r->name);
        return NULL;
    }
    d->line = r->line;
    d->file_len = file_size ? (uint32_t)(file_size - 1) : 0;
    if (r->file)
        d->file = memcpy(d + 1, r->file, file_size);
    d->n_lines = r->n_lines;
    if (r->n_lines && !(d->lines = copy_lines(r))) {
        detail_free(d);
        jf__fail(JF_ENOMEM, "out of memory copying the line table of %s", r->name);
        return NULL;
    }
    if (r->cfi && !(d->cfi = jf__cfi_clone(r->cfi))) {
        detail_free(d);
        return NULL;
    }
    return d;
}

jf__live *jf__live_new(const jf_region *r)
{
    /* Sanitising never lengthens a name (one '?' per bad byte), so its
     * length bounds the copy, measured once here. */
    size_t name_len = strnlen(r->name, JF_NAME_MAX);
    jf__live *l = jf__slab_alloc(sizeof *l + name_len + 1);
    if (!l) {
        jf__fail(JF_ENOMEM, "out of memory copying region %s", r->name);
        return NULL;
    }
    l->start = (uintptr_t)r->addr;
    l->size = r->size;
    l->detail = NULL;
    l->jitdump_note = 0;
    l->pub_slot = 0;
    l->name_len = (uint32_t)jf__sanitize_name(l->name, r->name, name_len);
    if ((r->file || r->line || r->n_lines || r->cfi) && !(l->detail = detail_copy(r))) {
        jf__slab_free(l);
        return NULL;
    }
    return l;
}

void jf__live_free(jf__live *r)
{
    if (!r)
        return;
    detail_free(r->detail);
    jf__slab_free(r);
}

/* The fresh-process cost of a registration is mostly its bytes (see
 * region_slab.c): a short name must keep a record in the 64-byte class. */
_Static_assert(sizeof(jf__live) <= 40, "jf__live grew: a 15-byte name no longer fits a 64-byte slot");
