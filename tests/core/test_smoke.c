/* Smoke test: init, register, unregister, shutdown round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"

static void init_register_unregister_shutdown(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&cfg), 0);
    static const unsigned char code[16];
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = sizeof code;
    r.name = "smoke";
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(jf_register(&r), JF_EEXIST);
    assert_int_equal(jf_unregister(code), 0);
    assert_int_equal(jf_unregister(code), JF_ENOENT);
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(jf_shutdown(), JF_ENOTINIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_register_unregister_shutdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
