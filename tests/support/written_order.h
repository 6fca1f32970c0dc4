/*
 * The byte order the library under test writes in: the host's, or the other
 * one when the test is built against the foreign-order variant of the
 * library (JF_TEST_FOREIGN_BYTE_ORDER, see src/arch/host.h).
 */
#ifndef JF_TEST_WRITTEN_ORDER_H
#define JF_TEST_WRITTEN_ORDER_H

#if defined(JF_TEST_FOREIGN_BYTE_ORDER)
#define WRITTEN_BIG_ENDIAN (__BYTE_ORDER__ != __ORDER_BIG_ENDIAN__)
#else
#define WRITTEN_BIG_ENDIAN (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
#endif

#endif
