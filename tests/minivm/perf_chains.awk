# Reduce `perf script -F ip,sym` output (call chains, leaf first, samples
# separated by blank lines) to one line per sample that has minivm frames:
#   <wellformed> <chain>
# chain: the interpreted functions from root to leaf, "main>fib>fib" (the
# "mvm:" prefix dropped). wellformed is 1 when the native stack mirrors the
# interpreted one exactly: between two trampolines there is exactly one
# mvm_eval_function frame, and the C main is below the root trampoline.
BEGIN { RS = ""; FS = "\n" }
{
    n = 0
    for (i = 1; i <= NF; i++) {
        s = $i
        sub(/^[ \t]*[0-9a-f]+ /, "", s)
        sym[i] = s
        if (s ~ /^mvm:/) idx[++n] = i
    }
    if (n == 0) next
    wf = 1
    chain = ""
    for (k = 1; k <= n; k++) {
        name = substr(sym[idx[k]], 5)
        chain = (k == 1) ? name : name ">" chain
        if (k > 1 && !(idx[k] - idx[k - 1] == 2 && sym[idx[k] - 1] == "mvm_eval_function"))
            wf = 0
    }
    native_main = 0
    for (i = idx[n] + 1; i <= NF; i++)
        if (sym[i] == "main") native_main = 1
    if (!native_main) wf = 0
    print wf, chain
}
