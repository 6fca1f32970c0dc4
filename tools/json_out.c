/* JSON string output for the tool (json_out.h). */
#include "json_out.h"

#include <string.h>

void json_string_n(FILE *out, const char *s, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

void json_string(FILE *out, const char *s)
{
    json_string_n(out, s, strlen(s));
}
