/*
 * What a target names (regions, files) may reach a terminal, a perf map or
 * a JSON document only as text that cannot act: this says which bytes are
 * safe to show as they are. Unsafe: C0 controls and DEL, C1 controls
 * (U+0080-U+009F), the bidirectional formatting characters (U+061C,
 * U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) and any byte that is not part
 * of valid UTF-8 (a lone 0x9B is a terminal's CSI).
 */
#ifndef JFT_TEXT_SAFE_H
#define JFT_TEXT_SAFE_H

#include <stddef.h>
#include <stdint.h>

/* The unit at s (n > 0 bytes left): a UTF-8 character, or one invalid byte.
 * Returns its length; *safe 1 when it may be shown as it is, and *cp its
 * code point (the byte itself for an invalid one, then *valid 0). */
size_t txt_unit(const uint8_t *s, size_t n, int *safe, int *valid, uint32_t *cp);

/* src[0, n) into dst (capacity n + 1) with each unsafe unit, and each
 * leading space, replaced by '?' (the library's rule for names, src/name.c,
 * with bidirectional controls added); an empty result reads "?" (dst needs
 * 2 bytes then). Returns the length written, dst NUL-terminated. */
size_t txt_sanitize(char *dst, const uint8_t *src, size_t n);

#endif
