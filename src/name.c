/*
 * Name sanitising, done once at registration for every sink. A perf map line
 * ends at a newline, its fields are separated by one space, bcc splits on
 * tabs, and readers assume UTF-8: a name must never be able to forge an
 * entry or confuse a reader.
 */
#define _POSIX_C_SOURCE 200809L
#include "name.h"

#include "jitframes.h"
#include "short_copy.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_sequence_length(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned min_second = 0x80, max_second = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            min_second = 0xa0; /* overlong */
        if (c == 0xed)
            max_second = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            min_second = 0x90; /* overlong */
        if (c == 0xf4)
            max_second = 0x8f; /* > U+10FFFF */
    } else {
        return 0;
    }
    if (s[1] < min_second || s[1] > max_second)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

/* C1 controls U+0080..U+009F (NEL is a line break to some readers). */
static int is_c1_control(const unsigned char *s, size_t len)
{
    return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* The bidirectional formatting characters (U+061C, U+200E-U+200F,
 * U+202A-U+202E, U+2066-U+2069): shown raw, U+202E reverses what follows
 * on a terminal or a page, so a name could pass for another. The readers of
 * the published table apply the same rule (tools/readers/text_safe.c). */
static int is_bidi_control(const unsigned char *s, size_t len)
{
    if (len == 2)
        return s[0] == 0xd8 && s[1] == 0x9c;
    if (len != 3 || s[0] != 0xe2)
        return 0;
    if (s[1] == 0x80)
        return s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae);
    return s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9;
}

/* Are the 8 bytes at s all in 0x20..0x7e? (SWAR: a byte below 0x20 borrows
 * into its top bit when 0x20 is subtracted; one at 0x7f or above has its
 * top bit set, itself or once 1 is added.) */
static int printable_ascii_word(const unsigned char *s)
{
    const uint64_t ones = 0x0101010101010101u, tops = 0x8080808080808080u;
    uint64_t x;
    memcpy(&x, s, sizeof x);
    return (((x - 0x20 * ones) & ~x) | x | (x + ones)) & tops ? 0 : 1;
}

/* How many bytes of s[0, len) are printable ASCII from the start: words of
 * 8, and the last bytes as the 8 that end at len (overlapping what the
 * words checked) rather than one at a time. */
static size_t printable_prefix(const unsigned char *s, size_t len)
{
    size_t out = 0;
    while (out + 8 <= len && printable_ascii_word(s + out))
        out += 8;
    if (out < len && out + 8 > len && len >= 8 && printable_ascii_word(s + len - 8))
        return len;
    while (out < len && s[out] >= 0x20 && s[out] < 0x7f)
        out++;
    return out;
}

/* Walk `name` (len bytes before its NUL or JF_NAME_MAX), writing at most
 * len bytes into dst. Returns the number of bytes written. */
static size_t sanitize_walk(char *dst, size_t len, const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t out = 0;
    /* The common name is printable ASCII: copied as it is in one pass (not
     * a leading space, which the careful walk below replaces). */
    if (*s != ' ') {
        out = printable_prefix(s, len);
        jf__short_copy(dst, name, out);
        s += out;
    }
    int leading = out == 0; /* still in the name's leading spaces */
    while (*s) {
        leading = leading && *s == ' ';
        size_t n = is_control(*s) ? 0 : utf8_sequence_length(s);
        const unsigned char *piece = s;
        size_t piece_len = n;
        /* A leading space would read as a second field separator in a perf
         * map line ("<start> <size>  name"): strict readers reject the line,
         * whitespace-splitting ones drop the space. */
        if (n == 0 || is_c1_control(s, n) || is_bidi_control(s, n) || leading) {
            /* One '?' per control character or per byte of bad UTF-8. */
            piece = (const unsigned char *)"?";
            piece_len = 1;
            n = n ? n : 1;
        }
        if (out + piece_len > len)
            break;
        memcpy(dst + out, piece, piece_len);
        out += piece_len;
        s += n;
    }
    return out;
}

size_t jf__sanitize_name(char *dst, const char *name, size_t len)
{
    size_t written = sanitize_walk(dst, len, name);
    dst[written] = '\0';
    return written;
}
