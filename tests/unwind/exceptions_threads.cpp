/*
 * C++ exceptions thrown through a frameless JIT function and a trampoline
 * by two threads, while the main thread keeps changing the tables those
 * FDEs live in: registering and unregistering neighbouring JIT regions
 * (singly and in batches, so the table holding the JIT function is rebuilt,
 * merged and split again and again) and creating and destroying
 * trampolines. A replacement table is registered before the one it
 * replaces goes, so no throw may ever miss an FDE: a miss is
 * std::terminate, and the test dies. Halfway (throwers paused, so none holds
 * the unwinder's lock across fork), the process forks: the child
 * inherits the registered tables, throws through them, changes them, and
 * exits 0; the parent's throws keep working after the child is gone.
 */
#include "jit_code.h"
#include "many_regions.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace
{

const size_t CHURN = 600, REGION = 32, BATCH = 20;
/* Caps on waits: generous for TSan, far below the CTest timeout. */
const int PAUSE_SECONDS = 30, CHILD_SECONDS = 150;

jit_function jit, tramp;
uint8_t *churn_code;
jf_cfi *churn_cfi;
char churn_names[CHURN][MANY_NAME];
std::atomic<bool> stop{false};
std::atomic<bool> pause_throwers{false};
std::atomic<int> paused{0};
std::atomic<long> caught{0};

extern "C" long throw_below(long x)
{
    if (x >= 0)
        throw std::runtime_error("through the JIT frames");
    return x;
}

extern "C" long via_trampoline(long x)
{
    return tramp.call(x) + 1;
}

void throw_and_catch()
{
    try {
        jit.fn(via_trampoline, 1);
    } catch (const std::runtime_error &) {
        caught++;
        return;
    }
    fprintf(stderr, "FAIL: the exception was not thrown\n");
    abort();
}

void fail(const char *what)
{
    fprintf(stderr, "FAIL: %s: %s\n", what, jf_last_error());
    exit(1);
}

/* Yield until done() holds; false if `seconds` pass first. */
template <class Cond> bool wait_until(Cond done, int seconds)
{
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::yield();
    }
    return true;
}

void thrower()
{
    while (!stop) {
        if (pause_throwers) {
            paused++;
            if (!wait_until([] { return !pause_throwers; }, CHILD_SECONDS + PAUSE_SECONDS)) {
                fprintf(stderr, "FAIL: the throwers were never resumed\n");
                _exit(1);
            }
            paused--;
        }
        throw_and_catch();
    }
}

/* The child's exit status; a child still running after `seconds` is
 * killed and the test fails. */
int wait_child(pid_t pid, int seconds)
{
    int status = 0;
    for (long i = 0; i < seconds * 100L; i++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            fail("waitpid");
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fprintf(stderr, "FAIL: the forked child still ran after %d s (killed)\n", seconds);
    exit(1);
}

/* One round of changes next to the JIT function and the trampoline. */
void churn_round(unsigned seed)
{
    std::vector<size_t> order(CHURN);
    shuffle_indexes(order.data(), CHURN, seed);
    for (size_t k = 0; k < CHURN; k += BATCH) {
        jf_region batch[BATCH];
        for (size_t i = 0; i < BATCH; i++)
            batch[i] = many_region(churn_code, REGION, churn_cfi, churn_names, "churn", order[k + i]);
        if (k % (4 * BATCH) == 0) {
            for (size_t i = 0; i < BATCH; i++)
                if (jf_register(&batch[i]) != 0)
                    fail("jf_register");
        } else if (jf_register_batch(batch, BATCH) != 0) {
            fail("jf_register_batch");
        }
    }
    jf_fn t[8];
    for (jf_fn &e : t)
        if (jf_trampoline_create(reinterpret_cast<jf_fn>(throw_below), "churn_tramp", NULL, &e) != 0)
            fail("jf_trampoline_create");
    shuffle_indexes(order.data(), CHURN, seed + 1);
    for (size_t k = 0; k < CHURN; k++)
        if (jf_unregister(churn_code + order[k] * REGION) != 0)
            fail("jf_unregister");
    for (jf_fn e : t)
        if (jf_trampoline_destroy(e) != 0)
            fail("jf_trampoline_destroy");
}

/* The child: throw, change the inherited tables, throw again. */
int child_life()
{
    for (int i = 0; i < 100; i++)
        throw_and_catch();
    churn_round(99);
    for (int i = 0; i < 100; i++)
        throw_and_catch();
    return 0;
}

} // namespace

int main()
{
    if (jit_setup(JF_SINK_UNWIND, throw_below, &jit, &tramp) != 0)
        return 1;
    /* Right after the JIT code's page, so its table merges with these. */
    void *hint = static_cast<uint8_t *>(const_cast<void *>(jit.addr)) + 4096;
    churn_code = static_cast<uint8_t *>(
        mmap(hint, CHURN * REGION, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (churn_code == MAP_FAILED || jf_cfi_new(&churn_cfi) != 0 ||
        jf_cfi_add_frameless(churn_cfi, 0, REGION, 8) != 0)
        fail("setup");

    std::thread a(thrower), b(thrower);
    for (unsigned round = 0; round < 6; round++) {
        churn_round(round * 2);
        if (round == 3 && getenv("NOFORK") == NULL) {
            /* No thrower may hold the unwinder's lock across fork(): the
             * child would inherit it locked. */
            pause_throwers = true;
            if (!wait_until([] { return paused == 2; }, PAUSE_SECONDS)) {
                fprintf(stderr, "FAIL: the throwers did not pause within %d s\n", PAUSE_SECONDS);
                exit(1);
            }
            pid_t pid = fork();
            if (pid < 0)
                fail("fork");
            if (pid == 0)
                _exit(child_life());
            int status = wait_child(pid, CHILD_SECONDS);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "FAIL: the forked child ended with status 0x%x\n", status);
                return 1;
            }
            fprintf(stderr, "ok: the forked child threw through the inherited tables and changed them\n");
            pause_throwers = false;
        }
    }
    stop = true;
    a.join();
    b.join();
    struct jf_stats st = JF_STATS_INIT;
    jf_stats(&st);
    fprintf(stderr,
            "ok: %ld exceptions caught through the JIT frames during %u rounds of changes; "
            "%llu tables left\n",
            caught.load(), 6u, (unsigned long long)st.sink[3].objects);
    if (caught == 0)
        return 1;
    jf_cfi_free(churn_cfi);
    jf_cfi_free(jit.cfi);
    jf_shutdown();
    fprintf(stderr, "PASSED\n");
    return 0;
}
