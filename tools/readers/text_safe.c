/* Safe text from a target's bytes (text_safe.h). */
#include "text_safe.h"

#include "jft_common.h"

static int is_bidi_control(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

static uint32_t decode(const uint8_t *s, size_t len)
{
    static const uint8_t lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    uint32_t cp = s[0] & lead_mask[len];
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3fu);
    return cp;
}

size_t txt_unit(const uint8_t *s, size_t n, int *safe, int *valid, uint32_t *cp)
{
    size_t len = jft_utf8_length(s, n);
    *valid = len != 0;
    if (!len) {
        *cp = s[0];
        *safe = 0;
        return 1;
    }
    *cp = decode(s, len);
    *safe = *cp >= 0x20 && *cp != 0x7f && !(*cp >= 0x80 && *cp < 0xa0) && !is_bidi_control(*cp);
    return len;
}

size_t txt_sanitize(char *dst, const uint8_t *src, size_t n)
{
    size_t out = 0;
    int leading = 1;
    for (size_t i = 0; i < n;) {
        if (src[i] > 0x20 && src[i] < 0x7f) { /* printable ASCII, not a space: the common case */
            dst[out++] = (char)src[i++];
            leading = 0;
            continue;
        }
        int safe, valid;
        uint32_t cp;
        size_t len = txt_unit(src + i, n - i, &safe, &valid, &cp);
        leading = leading && src[i] == ' ';
        if (safe && !leading) {
            for (size_t k = 0; k < len; k++)
                dst[out++] = (char)src[i + k];
        } else {
            dst[out++] = '?';
        }
        i += len;
    }
    if (out == 0)
        dst[out++] = '?';
    dst[out] = '\0';
    return out;
}
