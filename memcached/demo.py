"""Writes 4x the server's -m 16 (64 MiB) of 4 KiB values, reads all back, prints stats."""
import os
import socket
import sys
import time

host, port = sys.argv[1], int(sys.argv[2])
for _ in range(100):
    try:
        sock = socket.create_connection((host, port))
        break
    except OSError:
        time.sleep(0.05)
else:
    sys.exit(f"demo: no memcached-ac at {host}:{port}")
rf = sock.makefile("rb")

n, size = 16384, 4096  # 64 MiB
value = lambda i: (b"%08d" % i) * (size // 8)
t0 = time.time()
for i in range(n):
    v = value(i)
    sock.sendall(b"set key:%d 0 0 %d\r\n%s\r\n" % (i, len(v), v))
    line = rf.readline()
    if line != b"STORED\r\n":
        sys.exit(f"demo: set key:{i} answered {line!r}")
t1 = time.time()
wrong = 0
for i in range(n):
    sock.sendall(b"get key:%d\r\n" % i)
    head = rf.readline().split()
    if head[:1] != [b"VALUE"]:
        wrong += 1
        continue
    data = rf.read(int(head[3]) + 2)[:-2]
    rf.readline()  # END
    wrong += data != value(i)
t2 = time.time()
sock.sendall(b"stats anticache\r\n")
stats = {}
for line in iter(rf.readline, b"END\r\n"):
    _, k, v = line.decode().split(" ", 2)
    stats[k] = v.strip()
print(f"wrote {n} x {size} B = {n * size >> 20} MiB into -m 16 in {t1 - t0:.1f} s; "
      f"read all back in {t2 - t1:.1f} s: {n - wrong} byte-exact, {wrong} wrong or missing")
print("stats anticache:")
for k, v in stats.items():
    print(f"  {k:22} {v}")
sys.exit(1 if wrong or stats.get("lost_items") != "0" else 0)
