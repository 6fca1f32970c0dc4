/*
 * Internal side of the CFI assembler: what the registry and the sinks need
 * from an unwind description. (The public builder API is in jitframes.h.)
 */
#ifndef JF_CFI_H
#define JF_CFI_H

#include "jitframes.h"

#include "arch/cfi_arch.h"

/* The architecture this library was built for, or -1 if none of the above. */
int jf__cfi_host_arch(void);

/* jf_cfi_new for a given architecture (tests build every architecture's
 * descriptions on any host). */
int jf__cfi_new_arch(jf__cfi_arch arch, struct jf_cfi **out);

/*
 * A CIE as read from an assembled object: the factors, the return address
 * column and the initial instructions (DWARF CFA opcodes, nops allowed).
 */
typedef struct jf__raw_cie {
    uint32_t code_align;
    int32_t data_align;
    uint32_t ra_reg;
    const uint8_t *insns;
    size_t insns_len;
} jf__raw_cie;

/*
 * A description with one FDE for region offsets [start, end) whose CFA
 * instructions are `fde_insns` (as found in an assembled template's FDE,
 * trailing nops allowed), under the CIE `cie`. The instructions are checked:
 * known opcodes only, no DW_CFA_set_loc, advances within the range, balanced
 * restore_state. Returns NULL with the last error set if they are not valid.
 * The result is closed: builder calls on it fail. Free with jf_cfi_free.
 */
struct jf_cfi *jf__cfi_from_raw(const jf__raw_cie *cie, const uint8_t *fde_insns, size_t fde_insns_len,
                                size_t start, size_t end);

/* The published table's form of a description (src/pub_layout.h: jf__pub_cfi,
 * host byte order): its size (0 if it has none: incomplete, no FDE, ranges
 * beyond 4 GiB), and writing those bytes to out. */
size_t jf__cfi_serialized_size(const struct jf_cfi *cfi);
void jf__cfi_serialize(const struct jf_cfi *cfi, uint8_t *out);

/* A description read back from that form by a reader of an untrusted table:
 * every size and instruction checked (as jf__cfi_from_raw checks), FDEs
 * sorted and disjoint, at most max_fdes. NULL with the last error set if
 * unsound. Free with jf__cfi_free. */
struct jf_cfi *jf__cfi_deserialize(const uint8_t *bytes, size_t len, size_t max_fdes);

/* Deep copy for the registry (the caller keeps ownership of the original).
 * Returns NULL with the last error set on failure. */
struct jf_cfi *jf__cfi_clone(const struct jf_cfi *cfi);

/* Make a complete description immutable and shared: from now on
 * jf__cfi_clone takes a reference instead of copying (the registry keeps one
 * per region, so every trampoline shares its template's description), and
 * the caller's own reference is dropped with jf__cfi_free like a clone's.
 * The builder must not be used on it again. */
int jf__cfi_share(struct jf_cfi *cfi);

/* 1 if jf__cfi_share made it shared (immutable, reference counted). */
int jf__cfi_is_shared(const struct jf_cfi *cfi);

/* Free a copy made by jf__cfi_clone. NULL is fine. */
void jf__cfi_free(struct jf_cfi *cfi);

/* Check that the description is complete and every FDE lies within a region
 * of `size` bytes (JF_EINVAL with the message set). */
int jf__cfi_validate(const struct jf_cfi *cfi, size_t size);

/* The start of the first FDE above region offset `from` whose first row is
 * the CIE's initial one (a function entry, as far as an unwinder can tell),
 * or `size` if there is none below it. NULL cfi: `size`. */
size_t jf__cfi_next_entry(const struct jf_cfi *cfi, size_t from, size_t size);

/* Where the emitted bytes will live, which fixes every pc-relative field. */
typedef enum jf__eh_layout {
    /* perf's synthesized DSO for a jitdump CODE_UNWINDING_INFO record:
     * .eh_frame at round8(code_size) after the code start, .eh_frame_hdr
     * right after .eh_frame, no terminator (docs/formats.md). */
    JF_EH_LAYOUT_PERF_JITDUMP,
    /* Absolute addresses: the bytes are used in place at `image_addr`
     * (GDB symfiles, __register_frame). FDE addresses are 64-bit absolute
     * (DW_EH_PE_absptr), so the image may live anywhere relative to its
     * code; .eh_frame ends with a zero terminator, then .eh_frame_hdr, whose
     * search table is present only when the code is within 32-bit reach of
     * it (hdr_size is then 12 + 8 * FDEs, else 8). */
    JF_EH_LAYOUT_ABSOLUTE,
} jf__eh_layout;

typedef struct jf__eh_image {
    size_t eh_frame_size; /* .eh_frame bytes (terminator included if any) */
    size_t hdr_size;      /* .eh_frame_hdr bytes (12 + 8 * number of FDEs) */
} jf__eh_image;

/* Upper bound of eh_frame_size + hdr_size for this description. */
size_t jf__cfi_max_image_size(const struct jf_cfi *cfi);

/*
 * Emit .eh_frame followed by .eh_frame_hdr into buf (capacity cap) for a
 * region at code_addr of code_size bytes. For JF_EH_LAYOUT_ABSOLUTE,
 * image_addr is the address buf will be used at. A description with no FDE
 * (fresh from jf_cfi_new) gives the CIE and a header with no entry: unwind
 * data that describes nothing. Returns 0 or a JF_E* code.
 */
int jf__cfi_emit(const struct jf_cfi *cfi, jf__eh_layout layout, uint64_t code_addr, uint64_t code_size,
                 uint64_t image_addr, uint8_t *buf, size_t cap, jf__eh_image *out);

#endif
