/* jitdump reader: placeholder until the validator lands. */
#include "jitdump_reader.h"

int jd_walk(const uint8_t *buf, size_t len, const jd_visitor *v, void *ctx, int keep_going,
            jd_summary *summary, jft_error *err)
{
    (void)buf; (void)len; (void)v; (void)ctx; (void)keep_going; (void)summary;
    return jft_fail(err, 0, "jitdump is not supported yet");
}

int jd_check(const uint8_t *buf, size_t len, jd_summary *summary, jft_error *err)
{
    return jd_walk(buf, len, NULL, NULL, 0, summary, err);
}

int jd_dump(const uint8_t *buf, size_t len, void *out, jd_summary *summary, jft_error *err)
{
    (void)out;
    return jd_walk(buf, len, NULL, NULL, 1, summary, err);
}
