/* JSON string output for the tool (json_out.h). */
#include "json_out.h"

#include "text_safe.h"

#include <stdint.h>
#include <string.h>

void json_string_n(FILE *out, const char *s, size_t n)
{
    const uint8_t *b = (const uint8_t *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        size_t run = i; /* printable ASCII that needs no escape: as it is, at once */
        while (run < n && b[run] >= 0x20 && b[run] < 0x7f && b[run] != '"' && b[run] != '\\')
            run++;
        fwrite(b + i, 1, run - i, out);
        if ((i = run) == n)
            break;
        int safe, valid;
        uint32_t cp;
        size_t len = txt_unit(b + i, n - i, &safe, &valid, &cp);
        if (safe && (cp == '"' || cp == '\\'))
            fprintf(out, "\\%c", (char)cp);
        else if (safe)
            fwrite(b + i, 1, len, out);
        else
            fprintf(out, "\\u%04x", valid ? (unsigned)cp : 0xfffdu);
        i += len;
    }
    fputc('"', out);
}

void json_string(FILE *out, const char *s)
{
    json_string_n(out, s, strlen(s));
}
