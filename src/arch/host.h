/*
 * Every fact about the architecture the library runs on, in one place: the
 * rest of src/ includes this and has no #if on the architecture of its own.
 * Adding an architecture touches this folder and the build: a block here,
 * its trampoline template (src/arch/<arch>.S, whose unwind rules
 * src/host/cfi-extract takes from the assembled object), its entry in the CFI
 * assembler's table (src/arch/cfi_arch.{h,c}, which describes every
 * architecture it can encode for, host or not) and a line in the build —
 * plus, being public API, the JF_DWARF_* register numbers in jitframes.h.
 * A template whose slot reference is a new relocation kind also needs it
 * read by src/host/cfi-extract and re-linked by src/trampoline.c (ppc64le and
 * s390x did; docs/porting.md lists every file each touched and why). Byte
 * order is a host fact like the others (JF_HOST_BIG_ENDIAN below, applied
 * by src/byte_order.h and src/byte_writer.h).
 *
 *   JF_HOST_ELF_MACHINE  e_machine of the host (jitdump header, GDB symfiles)
 *   JF_HOST_ELF_FLAGS    e_flags gdb derives the objfile's ABI from
 *   JF_HOST_CFI_ARCH     the host's entry in src/arch/cfi_arch.c's table
 *   JF_HOST_BIG_ENDIAN   1 on a big-endian host: the byte order of every
 *                        integer the library writes for a consumer here
 *                        (jitdump, .eh_frame, symfiles: EI_DATA) and reads
 *                        back from itself (src/byte_order.h)
 *   JF_HOST_UNALIGNED_STORE32_ATOMIC
 *                        1 if a 4-byte store is one instruction even when
 *                        unaligned (the jitdump's publishing store, see
 *                        JITDUMP_LOAD_PAD_MAX in src/jitdump_encode.h)
 *   JF_HOST_HAS_TICKS    1 if jf__host_ticks() reads a cycle counter cheaper
 *                        than clock_gettime (x86_64: the TSC), 0 if it
 *                        returns 0 (src/published.c then reads the clock)
 *   JF_HOST_TICKS_CLOCKSOURCE
 *                        the kernel's name for a clocksource that is that
 *                        counter (x86_64: "tsc"; "" if none): where it is the
 *                        current one, the counter is synchronised between
 *                        CPUs and CLOCK_MONOTONIC follows it, so the removal
 *                        clock (src/tick_clock.h) extrapolates with it
 */
#ifndef JF_ARCH_HOST_H
#define JF_ARCH_HOST_H

#if defined(__x86_64__)
#define JF_HOST_ELF_MACHINE 62u /* EM_X86_64 */
#define JF_HOST_ELF_FLAGS 0u
#define JF_HOST_CFI_ARCH JF_CFI_ARCH_X86_64
#define JF_HOST_BIG_ENDIAN 0
#define JF_HOST_UNALIGNED_STORE32_ATOMIC 1
#define JF_HOST_HAS_TICKS 1
#define JF_HOST_TICKS() __builtin_ia32_rdtsc()
#define JF_HOST_TICKS_CLOCKSOURCE "tsc"

#elif defined(__aarch64__)
#define JF_HOST_ELF_MACHINE 183u /* EM_AARCH64 */
#define JF_HOST_ELF_FLAGS 0u
#define JF_HOST_CFI_ARCH JF_CFI_ARCH_AARCH64
#define JF_HOST_HAS_TICKS 0
#define JF_HOST_TICKS() 0u
#define JF_HOST_TICKS_CLOCKSOURCE ""
#define JF_HOST_BIG_ENDIAN 0
#define JF_HOST_UNALIGNED_STORE32_ATOMIC 1

#elif defined(__riscv) && __riscv_xlen == 64
#define JF_HOST_ELF_MACHINE 243u /* EM_RISCV */
/* gdb derives the objfile's ABI from these: match what we were built for. */
#if defined(__riscv_float_abi_double)
#define JF_HOST_RISCV_FLOAT_ABI 0x4u
#elif defined(__riscv_float_abi_single)
#define JF_HOST_RISCV_FLOAT_ABI 0x2u
#else
#define JF_HOST_RISCV_FLOAT_ABI 0x0u
#endif
#if defined(__riscv_compressed)
#define JF_HOST_ELF_FLAGS (JF_HOST_RISCV_FLOAT_ABI | 0x1u) /* EF_RISCV_RVC */
#else
#define JF_HOST_ELF_FLAGS JF_HOST_RISCV_FLOAT_ABI
#endif
#define JF_HOST_CFI_ARCH JF_CFI_ARCH_RISCV64
#define JF_HOST_HAS_TICKS 0
#define JF_HOST_TICKS() 0u
#define JF_HOST_TICKS_CLOCKSOURCE ""
#define JF_HOST_BIG_ENDIAN 0
/* gcc emits four byte stores for an unaligned 4-byte store. */
#define JF_HOST_UNALIGNED_STORE32_ATOMIC 0

#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__) && defined(_CALL_ELF) && _CALL_ELF == 2
#define JF_HOST_ELF_MACHINE 21u /* EM_PPC64 */
#define JF_HOST_ELF_FLAGS 2u    /* the ELFv2 ABI */
#define JF_HOST_CFI_ARCH JF_CFI_ARCH_PPC64LE
#define JF_HOST_HAS_TICKS 0
#define JF_HOST_TICKS() 0u
#define JF_HOST_TICKS_CLOCKSOURCE ""
#define JF_HOST_BIG_ENDIAN 0
/* Power8 and later store an unaligned word with one instruction, but not
 * single-copy atomically across a cache line: keep records aligned. */
#define JF_HOST_UNALIGNED_STORE32_ATOMIC 0

#elif defined(__s390x__)
#define JF_HOST_ELF_MACHINE 22u /* EM_S390 */
#define JF_HOST_ELF_FLAGS 0u
#define JF_HOST_CFI_ARCH JF_CFI_ARCH_S390X
#define JF_HOST_HAS_TICKS 0
#define JF_HOST_TICKS() 0u
#define JF_HOST_TICKS_CLOCKSOURCE ""
#define JF_HOST_BIG_ENDIAN 1
#define JF_HOST_UNALIGNED_STORE32_ATOMIC 0

#else
#error "jitframes: no architecture facts for this host (see src/arch/host.h)"
#endif

/* The tests build the library once more with JF_TEST_FOREIGN_BYTE_ORDER:
 * its writers then use the other byte order, so the files a big-endian host
 * writes are checked on a little-endian one and the other way round
 * (tests/tool). Such a library is for writing files only. */
#if defined(JF_TEST_FOREIGN_BYTE_ORDER)
#undef JF_HOST_BIG_ENDIAN
#define JF_HOST_BIG_ENDIAN (__BYTE_ORDER__ != __ORDER_BIG_ENDIAN__)
#endif

/* The host's cycle counter (JF_HOST_HAS_TICKS), for rate-limiting reads of a
 * clock: in no unit, and not synchronised between CPUs unless the kernel
 * keeps time with it (JF_HOST_TICKS_CLOCKSOURCE), so elsewhere only
 * differences far above its noise mean anything. 0 where there is none. */
static inline unsigned long long jf__host_ticks(void)
{
    return JF_HOST_TICKS();
}

#endif
