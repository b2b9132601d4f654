#!/bin/bash
# The kernel's RTO on its timer wheel, measured: when does a retransmission timer fire?
# (root; ip, tcpdump, iptables, python3). A sender in namespace hw-a writes 100 bytes every
# 50 ms for 1 s to a receiver in hw-b over a veth pair (RTT well below 1 ms, so the RTO is the
# 200 ms floor), then hw-b drops everything from it and the sender writes once more; the
# retransmissions of that last segment are captured on hw-a's veth for 8 s. Prints the time
# from each transmission to the next against tcp/timer_clock.rs's three clocks: the exact one
# (haslab's default), Linux 4.8+'s wheel (`timer_clock = "linux"`) and the cascading wheel
# before 4.8 (`"linux-3.19"`), each with the backed-off RTO in whole jiffies (2 × the last).
#   sudo validation/timer-wheel/run.sh [HZ]     # HZ: the running kernel's CONFIG_HZ (250)
set -e
HZ=${1:-250}
PCAP=$(mktemp --suffix=.pcap)
SV=
cleanup() {
    [ -n "$SV" ] && kill "$SV" 2>/dev/null || true
    ip netns del hw-a 2>/dev/null || true; ip netns del hw-b 2>/dev/null || true
}
trap cleanup EXIT
cleanup
ip netns add hw-a; ip netns add hw-b
ip link add va netns hw-a type veth peer name vb netns hw-b
ip -n hw-a addr add 10.9.0.1/24 dev va; ip -n hw-b addr add 10.9.0.2/24 dev vb
for n in hw-a hw-b; do ip -n $n link set lo up; done
ip -n hw-a link set va up; ip -n hw-b link set vb up
# no tail-loss probe: the first timer to fire is the RTO itself
ip netns exec hw-a sysctl -q net.ipv4.tcp_early_retrans=0 net.ipv4.tcp_no_metrics_save=1
ip netns exec hw-b python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.9.0.2", 5555)); s.listen(1)
c, _ = s.accept()
while c.recv(65536): pass
' &
SV=$!
sleep 0.5
ip netns exec hw-a tcpdump -i va -w "$PCAP" -U 'tcp port 5555' 2>/dev/null &
TD=$!
sleep 0.5
ip netns exec hw-a python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.connect(("10.9.0.2", 5555))
t0 = time.time()
while time.time() - t0 < 1.0:
    s.send(b"x" * 100); time.sleep(0.05)
time.sleep(0.5); s.send(b"y" * 100)
time.sleep(8)
' &
CL=$!
sleep 1.2
ip netns exec hw-b iptables -A INPUT -p tcp --dport 5555 -j DROP
wait $CL || true
kill $TD; sleep 0.3
python3 - "$PCAP" "$HZ" <<'PY'
import struct, sys
path, hz = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
nano = struct.unpack("<I", data[:4])[0] == 0xA1B23C4D
link = struct.unpack("<I", data[20:24])[0]
o, sends = 24, []
while o + 16 <= len(data):
    sec, frac, cap, _ = struct.unpack("<IIII", data[o:o + 16]); o += 16
    p = data[o:o + cap]; o += cap
    if link == 1:
        p = p[14:]
    ihl = (p[0] & 15) * 4
    sport, _, seq = struct.unpack(">HHI", p[ihl:ihl + 8])
    doff = (p[ihl + 12] >> 4) * 4
    if sport != 5555 and struct.unpack(">H", p[2:4])[0] - ihl - doff > 0:
        sends.append((sec + frac / (1e9 if nano else 1e6), seq))
last = sends[-1][1]
times = [t for t, s in sends if s == last]
jiffy = 1000 / hz
rto_j = -(-200_000 * hz // 1_000_000) + 1  # usecs_to_jiffies(200 ms + SRTT of some µs)
print(f"{len(times)} transmissions of the last segment; HZ = {hz}, first RTO {rto_j} jiffies")
print("  measured ms | exact ms | 3.19 wheel ms   | 4.8+ wheel ms (ranges: over where in its tick the timer was armed)")
for k, (a, b) in enumerate(zip(times, times[1:])):
    j = rto_j << k
    lvl = next((n - 1 for n in range(1, 9) if j < (63 << (3 * (n - 1)))), 8)
    gran = 1 << (3 * lvl)
    exact = 200 * 2 ** k  # the RTO in ns: 200 ms (+ an SRTT of some µs), doubled
    print(f"  {(b - a) * 1e3:11.2f} | {exact:8.0f} | {(j - 1) * jiffy:7.2f}–{j * jiffy:7.2f} | "
          f"{j * jiffy:7.2f}–{(j + gran) * jiffy:7.2f} (level {lvl})")
PY
rm -f "$PCAP"
