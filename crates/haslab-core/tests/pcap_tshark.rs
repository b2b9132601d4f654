//! The pcap writer checked by an independent dissector: a hand-built TCP conversation is
//! written with [`PcapWriter`] and read back by `tshark`.
//!
//! The conversation: three-way handshake with Linux's SYN options (MSS, SACK-permitted,
//! timestamps, window scale), a 100-byte request, five 1448-byte data segments whose sequence
//! numbers wrap past 2^32, the third one lost after the capture point (so the receiver sends
//! duplicate ACKs with SACK blocks and the sender retransmits it), and a FIN/ACK close.
//!
//! Checked, on a full capture (snaplen 65535) and a header-only one (snaplen 96):
//! - no malformed packet, no expert-info error or warning (checksum errors are expert errors;
//!   a wrong sequence number would show as "ACKed unseen segment" / "Previous segment not
//!   captured" warnings);
//! - IPv4 header checksums are good in both captures; TCP checksums are good in the full one
//!   (in the truncated one tshark cannot verify them and marks them "unverified", status 2);
//! - `-z conv,tcp` counts the bytes and frames we wrote (from `orig_len`, even when truncated);
//! - the sum of `tcp.len` equals the payload written (tshark takes it from the IP total length
//!   and data offset, so truncation does not matter);
//! - the retransmission and the SACK blocks are recognised.
//!
//! tshark is an external program: if it is missing the test prints a note and passes, unless
//! `HASLAB_REQUIRE_TSHARK=1`, in which case it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use haslab_core::net::packet::{flags, Packet, SynOptions, TcpHeader};
use haslab_core::net::pcap::PcapWriter;

const CLIENT: u32 = 0;
const SERVER: u32 = 1;
const CPORT: u16 = 40001;
/// A port with no dissector registered in tshark, so the zero payload is shown as "data".
const SPORT: u16 = 33000;
const MSS: u32 = 1448;

struct Conv {
    pkts: Vec<(u64, Packet)>,
    t_ns: u64,
}

impl Conv {
    fn push(&mut self, dt_us: u64, to_server: bool, h: TcpHeader) {
        self.t_ns += dt_us * 1000;
        let (src, dst, sp, dp) = if to_server {
            (CLIENT, SERVER, CPORT, SPORT)
        } else {
            (SERVER, CLIENT, SPORT, CPORT)
        };
        let h = TcpHeader {
            src_port: sp,
            dst_port: dp,
            ..h
        };
        self.pkts
            .push((self.t_ns, Packet::tcp(src, dst, 0, to_server, h)));
    }
}

fn conversation() -> Vec<(u64, Packet)> {
    let mut c = Conv {
        pkts: Vec::new(),
        t_ns: 1_000_000_000,
    };
    let ack = flags::ACK;
    let c_isn: u32 = 0x1000_0000;
    // Server ISN chosen so that the data sequence numbers wrap during the fourth segment.
    let s_isn: u32 = 0u32.wrapping_sub(1 + 3 * MSS + 100);
    let syn_opts = SynOptions {
        mss: 1460,
        wscale: Some(7),
        sack_permitted: true,
    };
    let (cw, sw) = (502u16, 509u16); // scaled windows (×128)

    // Handshake.
    c.push(
        0,
        true,
        TcpHeader {
            seq: c_isn,
            flags: flags::SYN,
            window: 64240,
            ts: Some((100, 0)),
            syn: Some(syn_opts),
            ..Default::default()
        },
    );
    c.push(
        10_000,
        false,
        TcpHeader {
            seq: s_isn,
            ack: c_isn + 1,
            flags: flags::SYN | ack,
            window: 65160,
            ts: Some((5000, 100)),
            syn: Some(syn_opts),
            ..Default::default()
        },
    );
    let c_seq = c_isn + 1;
    let s_seq = s_isn.wrapping_add(1);
    c.push(
        10_000,
        true,
        TcpHeader {
            seq: c_seq,
            ack: s_seq,
            flags: ack,
            window: cw,
            ts: Some((110, 5000)),
            ..Default::default()
        },
    );
    // Request.
    c.push(
        50,
        true,
        TcpHeader {
            seq: c_seq,
            ack: s_seq,
            flags: ack | flags::PSH,
            window: cw,
            ts: Some((110, 5000)),
            payload_bytes: 100,
            ..Default::default()
        },
    );
    let c_end = c_seq + 100;
    // Response: five full segments; seq numbers wrap inside the fourth.
    let seg = |i: u32| s_seq.wrapping_add(i * MSS);
    let data = |i: u32, tsval: u32| TcpHeader {
        seq: seg(i),
        ack: c_end,
        flags: if i == 4 { ack | flags::PSH } else { ack },
        window: sw,
        ts: Some((tsval, 120)),
        payload_bytes: MSS,
        ..Default::default()
    };
    for i in 0..5 {
        c.push(if i == 0 { 10_000 } else { 120 }, false, data(i, 5010));
    }
    // Segment 2 is lost after the capture point. The client acknowledges 0 and 1, then sends
    // duplicate ACKs with SACK blocks for 3 and 3–4.
    let cack = |ack_to: u32, sack: &[(u32, u32)], tsval: u32| {
        let mut h = TcpHeader {
            seq: c_end,
            ack: ack_to,
            flags: ack,
            window: cw,
            ts: Some((tsval, 5010)),
            ..Default::default()
        };
        h.sack[..sack.len()].copy_from_slice(sack);
        h.sack_len = sack.len() as u8;
        h
    };
    c.push(10_000, true, cack(seg(2), &[], 130));
    c.push(120, true, cack(seg(2), &[(seg(3), seg(4))], 130));
    c.push(120, true, cack(seg(2), &[(seg(3), seg(5))], 130));
    // Fast retransmission of segment 2.
    c.push(
        10_000,
        false,
        TcpHeader {
            ts: Some((5021, 130)),
            ..data(2, 5021)
        },
    );
    c.push(
        10_000,
        true,
        TcpHeader {
            ts: Some((140, 5021)),
            ..cack(seg(5), &[], 140)
        },
    );
    // Close: server FIN, client FIN, last ACK.
    c.push(
        100,
        false,
        TcpHeader {
            seq: seg(5),
            ack: c_end,
            flags: flags::FIN | ack,
            window: sw,
            ts: Some((5031, 140)),
            ..Default::default()
        },
    );
    c.push(
        10_000,
        true,
        TcpHeader {
            seq: c_end,
            ack: seg(5).wrapping_add(1),
            flags: flags::FIN | ack,
            window: cw,
            ts: Some((150, 5031)),
            ..Default::default()
        },
    );
    c.push(
        10_000,
        false,
        TcpHeader {
            seq: seg(5).wrapping_add(1),
            ack: c_end + 1,
            flags: ack,
            window: sw,
            ts: Some((5041, 150)),
            ..Default::default()
        },
    );
    // The wrap really happens during the data.
    assert!(
        seg(3) > seg(4),
        "sequence numbers wrap between segments 3 and 4"
    );
    c.pkts
}

fn tshark_available() -> bool {
    let found = Command::new("tshark")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        if std::env::var("HASLAB_REQUIRE_TSHARK").as_deref() == Ok("1") {
            panic!("tshark is not installed but HASLAB_REQUIRE_TSHARK=1");
        }
        eprintln!("note: tshark not found; skipping the pcap/tshark test (set HASLAB_REQUIRE_TSHARK=1 to fail)");
    }
    found
}

/// Runs tshark on `file` with checksum validation on; returns stdout.
fn tshark(file: &Path, args: &[&str]) -> String {
    let out = Command::new("tshark")
        .arg("-n")
        .arg("-r")
        .arg(file)
        .args([
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
        ])
        .args(args)
        .output()
        .expect("running tshark");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "tshark {args:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn write_pcap(dir: &Path, name: &str, snaplen: u32, pkts: &[(u64, Packet)]) -> PathBuf {
    let path = dir.join(name);
    let mut w = PcapWriter::create(&path, snaplen).unwrap();
    for (t, p) in pkts {
        w.write_packet(*t, p).unwrap();
    }
    w.finish().unwrap();
    path
}

/// Per frame: the requested fields, split on tabs.
fn fields(file: &Path, names: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"];
    for n in names {
        args.push("-e");
        args.push(n);
    }
    tshark(file, &args)
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

fn check_capture(path: &Path, snaplen: u32, pkts: &[(u64, Packet)]) {
    let total_bytes: u64 = pkts.iter().map(|(_, p)| p.size_bytes as u64).sum();
    assert!(
        total_bytes < 10_000,
        "tshark's conversation table rounds 10 000 bytes and more"
    );
    let payload: u64 = pkts
        .iter()
        .map(|(_, p)| match p.transport {
            haslab_core::net::packet::Transport::Tcp(h) => h.payload_bytes as u64,
            _ => 0,
        })
        .sum();

    // Frame by frame: lengths, checksum status, expert messages.
    let rows = fields(
        path,
        &[
            "frame.number",
            "frame.len",
            "frame.cap_len",
            "ip.checksum.status",
            "tcp.checksum.status",
            "tcp.len",
            "tcp.seq",
            "tcp.options.sack_le",
            "tcp.analysis.retransmission",
            "_ws.malformed",
            "_ws.expert.severity",
            "_ws.expert.message",
        ],
    );
    assert_eq!(rows.len(), pkts.len(), "frames read by tshark");
    let mut tcp_len_sum = 0u64;
    let mut sack_frames = 0;
    let mut retrans_frames = 0;
    for (row, (_, p)) in rows.iter().zip(pkts) {
        let ctx = format!("{}: {row:?}", path.display());
        assert_eq!(row.len(), 12, "{ctx}");
        assert_eq!(
            row[1],
            p.size_bytes.to_string(),
            "frame.len = orig_len: {ctx}"
        );
        assert_eq!(
            row[2],
            p.size_bytes.min(snaplen).to_string(),
            "frame.cap_len: {ctx}"
        );
        assert_eq!(row[3], "1", "IPv4 checksum good: {ctx}");
        let full = p.size_bytes <= snaplen;
        // 1 = good, 2 = unverified (tshark does not check what it cannot see whole).
        assert_eq!(
            row[4],
            if full { "1" } else { "2" },
            "TCP checksum status: {ctx}"
        );
        tcp_len_sum += row[5]
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("tcp.len: {ctx}"));
        if !row[7].is_empty() {
            sack_frames += 1;
        }
        if !row[8].is_empty() {
            retrans_frames += 1;
        }
        assert!(row[9].is_empty(), "malformed: {ctx}");
        // Expert severities: chat 0x200000, note 0x400000, warn 0x600000, error 0x800000.
        for sev in row[10].split('|').filter(|s| !s.is_empty()) {
            let v = match sev.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16),
                None => sev.parse::<u32>(),
            }
            .unwrap_or_else(|_| panic!("severity {sev:?}: {ctx}"));
            assert!(v < 0x0060_0000, "expert warning or error: {ctx}");
        }
        let msg = row[11].to_ascii_lowercase();
        assert!(!msg.contains("malformed") && !msg.contains("bad"), "{ctx}");
    }
    assert_eq!(tcp_len_sum, payload, "sum of tcp.len");
    assert_eq!(sack_frames, 2, "frames with SACK blocks");
    assert_eq!(retrans_frames, 1, "retransmissions");

    // The expert summary: no Errors or Warns section at all.
    let expert = tshark(path, &["-q", "-z", "expert"]);
    for bad in ["Errors (", "Warns ("] {
        assert!(
            !expert.contains(bad),
            "{}: expert info:\n{expert}",
            path.display()
        );
    }
    assert!(
        !expert.to_ascii_lowercase().contains("malformed"),
        "{expert}"
    );

    // The conversation table: one TCP stream, all frames and bytes.
    let conv = tshark(path, &["-q", "-z", "conv,tcp"]);
    let lines: Vec<&str> = conv.lines().filter(|l| l.contains("<->")).collect();
    assert_eq!(lines.len(), 1, "one TCP conversation:\n{conv}");
    // Client is A (198.18.0.1), server B: columns "<-" = server to client, "->" = client to
    // server, then the total.
    let dir_sum = |to_server: bool| {
        let d: Vec<_> = pkts
            .iter()
            .filter(|(_, p)| p.to_server == to_server)
            .collect();
        (
            d.len() as u64,
            d.iter().map(|(_, p)| p.size_bytes as u64).sum::<u64>(),
        )
    };
    let expect = [
        dir_sum(false),
        dir_sum(true),
        (pkts.len() as u64, total_bytes),
    ];
    assert_eq!(
        conv_columns(lines[0]),
        expect,
        "conversation (frames, bytes):\n{conv}"
    );
}

/// The (frames, bytes) columns of a `-z conv,tcp` line, in order "<-" (B to A), "->" (A to B)
/// and total: `A <-> B  frames bytes  frames bytes  frames bytes  start duration`. tshark 4.x
/// writes byte counts with a unit, exact below 10 000 ("9712 bytes") and rounded above
/// ("12 kB"), which is why the conversation is kept under 10 000 bytes.
fn conv_columns(line: &str) -> Vec<(u64, u64)> {
    let after = line.split("<->").nth(1).unwrap();
    let toks: Vec<&str> = after.split_whitespace().skip(1).collect();
    // Collapse "N unit" pairs into one count.
    let mut counts: Vec<(u64, Option<&str>)> = Vec::new();
    let mut i = 0;
    while i < toks.len() && counts.len() < 6 {
        let Ok(v) = toks[i].replace(',', "").parse::<u64>() else {
            break;
        };
        match toks.get(i + 1) {
            Some(u) if u.chars().all(|ch| ch.is_ascii_alphabetic()) => {
                counts.push((v, Some(u)));
                i += 2;
            }
            _ => {
                counts.push((v, None));
                i += 1;
            }
        }
    }
    assert_eq!(counts.len(), 6, "unparsed conversation line: {line}");
    counts
        .chunks(2)
        .map(|c| {
            let (frames, bytes) = (c[0].0, c[1]);
            assert!(
                matches!(bytes.1, None | Some("bytes")),
                "bytes rounded: {line}"
            );
            (frames, bytes.0)
        })
        .collect()
}

#[test]
fn tshark_reads_our_pcaps_cleanly() {
    if !tshark_available() {
        return;
    }
    let pkts = conversation();
    let dir = std::env::temp_dir().join(format!("haslab-pcap-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for snaplen in [65535, 96] {
        let path = write_pcap(&dir, &format!("conv-{snaplen}.pcap"), snaplen, &pkts);
        check_capture(&path, snaplen, &pkts);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
