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

jf__live *jf__live_new(const jf_region *r)
{
    /* Sanitising never lengthens a name (one '?' per bad byte), so its
     * length bounds the copy, measured once here. */
    size_t name_len = strnlen(r->name, JF_NAME_MAX), name_size = name_len + 1;
    size_t file_size = string_size(r->file);
    jf__live *l = jf__slab_alloc(sizeof *l + name_size + file_size);
    if (!l) {
        jf__fail(JF_ENOMEM, "out of memory copying region %s", r->name);
        return NULL;
    }
    l->start = (uintptr_t)r->addr;
    l->size = r->size;
    l->line = r->line;
    l->name_len = (uint32_t)jf__sanitize_name(l->name, r->name, name_len);
    l->file = NULL;
    l->file_len = file_size ? (uint32_t)(file_size - 1) : 0;
    if (r->file) {
        char *file = l->name + name_size;
        memcpy(file, r->file, file_size);
        l->file = file;
    }
    l->lines = NULL;
    l->n_lines = r->n_lines;
    l->cfi = NULL;
    memset(l->sink_handle, 0, sizeof l->sink_handle);
    l->pub_slot = 0;
    if (r->n_lines && !(l->lines = copy_lines(r))) {
        jf__slab_free(l);
        jf__fail(JF_ENOMEM, "out of memory copying the line table of %s", r->name);
        return NULL;
    }
    if (r->cfi && !(l->cfi = jf__cfi_clone(r->cfi))) {
        free(l->lines);
        jf__slab_free(l);
        return NULL;
    }
    return l;
}

void jf__live_free(jf__live *r)
{
    if (!r)
        return;
    jf__cfi_free(r->cfi);
    free(r->lines);
    jf__slab_free(r);
}
