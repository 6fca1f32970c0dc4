"""A small Python program for the demo: a shop pricing orders.

Run plain, it is one opaque native frame to perf and gdb; under jitframes
(`python3 -m jitframes shop.py`) every function below is a frame of its own.
`shop.py --trap` stops itself with SIGTRAP deep in the call chain, for gdb.
"""
import os
import signal
import sys


def parse_order(line):
    name, qty, price = line.split(",")
    return name, int(qty), float(price)


def apply_discount(total, qty):
    rate = 0.0
    for threshold, r in ((10, 0.05), (50, 0.1), (100, 0.15)):
        if qty >= threshold:
            rate = r
    return total * (1 - rate)


def tax(amount):
    return round(amount * 1.2, 2)


def price_order(line):
    name, qty, price = parse_order(line)
    return tax(apply_discount(qty * price, qty))


def checksum(text):
    h = 0
    for ch in text:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return h


def run_orders(n):
    total = 0.0
    for i in range(n):
        line = "item%d,%d,%d.5" % (i % 97, i % 120, i % 13)
        total += price_order(line)
        if i % 8 == 0:
            total += checksum(line) % 7
    return total


def stop_here_for_gdb():
    os.kill(os.getpid(), signal.SIGTRAP)


def audit():
    stop_here_for_gdb()


def main():
    if "--trap" in sys.argv:
        run_orders(10)
        audit()
        return
    print("total: %.2f" % run_orders(int(sys.argv[1]) if len(sys.argv) > 1 else 300000))


if __name__ == "__main__":
    main()
