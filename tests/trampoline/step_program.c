/*
 * The trampoline template linked as assembled (its own symbol and .eh_frame
 * in this program), called from C: gdb single-steps through it (step.py).
 * The template calls whatever jitframes_trampoline_slot holds.
 */
void jitframes_trampoline_template(void);
void *jitframes_trampoline_slot;

typedef long (*binary_fn)(long, long);

__attribute__((noinline)) long step_target(long a, long b)
{
    return a * 7 + b;
}

__attribute__((noinline)) long step_caller(long a)
{
    binary_fn through = (binary_fn)(void *)jitframes_trampoline_template;
    long r = through(a, 3);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

int main(void)
{
    jitframes_trampoline_slot = (void *)step_target;
    return step_caller(5) == 39 ? 0 : 1;
}
