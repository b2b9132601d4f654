//! pcap output: packets as they cross a link, written in the classic libpcap file format so
//! that Wireshark / tshark / tcpdump can read them.
//!
//! # File format
//!
//! The classic libpcap format (<https://wiki.wireshark.org/Development/LibpcapFileFormat>,
//! and the IETF draft `draft-ietf-opsawg-pcap`): a 24-byte global header followed by one
//! 16-byte record header plus the captured bytes per packet. We write
//!
//! - magic `0xa1b23c4d`: the record timestamps are seconds + **nanoseconds** (simulated time
//!   is integer nanoseconds, so nothing is rounded);
//! - version 2.4, thiszone 0, sigfigs 0, the requested `snaplen`;
//! - link type `LINKTYPE_RAW` (101): every record starts directly with the IPv4 header;
//! - all fields little-endian (readers detect the byte order from the magic), so a file's
//!   bytes do not depend on the host that wrote it.
//!
//! Each record has `orig_len` = the packet's [`Packet::size_bytes`] (the total IPv4 length,
//! what the link serialised) and `incl_len` = `min(snaplen, orig_len)`: only the first
//! `incl_len` bytes are written, as a capture with `tcpdump -s snaplen` would.
//!
//! # Packet bytes
//!
//! Payload is not materialised by the simulator; it is written as zeros. Headers are built by
//! [`encode_ipv4`]:
//!
//! - IPv4 (RFC 791): version 4, IHL 5 (no options), DSCP/ECN 0, total length = `size_bytes`,
//!   identification 0, DF set, TTL 64, protocol 6 (TCP) or 17 (UDP), header checksum, addresses
//!   from [`Packet::node_ipv4`].
//! - TCP (RFC 793 / RFC 9293): ports, sequence/acknowledgement numbers as on the wire, data
//!   offset, flags, window, checksum over the pseudo-header, urgent pointer 0. Options in the
//!   order and with the padding Linux uses (`tcp_options_write()`), which is what
//!   [`TcpHeader::option_bytes`] counts:
//!   - SYN / SYN-ACK: MSS (kind 2, RFC 793); then, with timestamps, either SACK-permitted
//!     (kind 4, RFC 2018) + TS (kind 8, RFC 7323) or NOP NOP TS; without timestamps, NOP NOP
//!     SACK-permitted if offered; then NOP + window scale (kind 3, RFC 7323) if offered.
//!   - other segments: NOP NOP TS (kind 8, 10 bytes) if timestamps are on; then NOP NOP SACK
//!     (kind 5, RFC 2018, length 2 + 8·n) if there are SACK blocks.
//! - UDP (RFC 768): ports, length, checksum over the pseudo-header (0 is sent as 0xffff).
//!
//! Checksums are the Internet checksum (RFC 1071). Since the payload is all zeros it adds
//! nothing to the sum, so checksums are computed over the headers (and the pseudo-header, whose
//! length field counts the payload) only; they are nevertheless those of the full datagram, so
//! tshark with checksum validation on reports them as good when the capture is not truncated.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::net::packet::{Packet, TcpHeader, Transport, IPV4_HEADER_BYTES, TCP_BASE_HEADER_BYTES};

/// Magic number of a classic pcap file with nanosecond-resolution timestamps.
pub const PCAP_MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// pcap file format version written (2.4, the only one in use).
pub const PCAP_VERSION: (u16, u16) = (2, 4);
/// Link type: raw IP, packets begin with the IPv4 (or IPv6) header.
pub const LINKTYPE_RAW: u32 = 101;
/// Size of the pcap global (file) header.
pub const PCAP_FILE_HEADER_BYTES: usize = 24;
/// Size of the pcap per-record header.
pub const PCAP_RECORD_HEADER_BYTES: usize = 16;
/// UDP header size.
pub const UDP_HEADER_BYTES: u32 = 8;
/// Time to live written in every IPv4 header (Linux's default).
pub const IPV4_TTL: u8 = 64;

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

// TCP option kinds.
const TCPOPT_NOP: u8 = 1;
const TCPOPT_MSS: u8 = 2;
const TCPOPT_WINDOW: u8 = 3;
const TCPOPT_SACK_PERM: u8 = 4;
const TCPOPT_SACK: u8 = 5;
const TCPOPT_TIMESTAMP: u8 = 8;

/// Writes packets to a classic pcap file (nanosecond timestamps, `LINKTYPE_RAW`).
///
/// Generic over the sink so that tests can write to memory; files are written through a
/// [`BufWriter`] by [`PcapWriter::create`]. Call [`PcapWriter::finish`] to flush and see any
/// error (dropping the writer flushes too, but ignores errors).
pub struct PcapWriter<W: Write = BufWriter<File>> {
    out: W,
    snaplen: u32,
    /// Reused encoding buffer: no allocation per packet once it has grown to the largest one.
    buf: Vec<u8>,
    packets: u64,
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (truncates) the file at `path` and writes the pcap file header.
    /// `snaplen` is the maximum number of bytes kept per packet; it must be at least 1.
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Self> {
        let file = File::create(path)?;
        PcapWriter::new(BufWriter::with_capacity(1 << 16, file), snaplen)
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes the pcap file header to `out` and returns a writer appending records to it.
    pub fn new(mut out: W, snaplen: u32) -> io::Result<Self> {
        if snaplen == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "pcap snaplen must be at least 1",
            ));
        }
        let mut h = [0u8; PCAP_FILE_HEADER_BYTES];
        h[0..4].copy_from_slice(&PCAP_MAGIC_NANOS.to_le_bytes());
        h[4..6].copy_from_slice(&PCAP_VERSION.0.to_le_bytes());
        h[6..8].copy_from_slice(&PCAP_VERSION.1.to_le_bytes());
        // thiszone (i32) and sigfigs (u32): 0.
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            snaplen,
            buf: Vec::with_capacity(2048),
            packets: 0,
        })
    }

    /// The snapshot length given at creation.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Number of packets written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Appends one record: `pkt` seen at simulated time `t_ns` (nanoseconds since the start).
    pub fn write_packet(&mut self, t_ns: u64, pkt: &Packet) -> io::Result<()> {
        let secs = u32::try_from(t_ns / 1_000_000_000).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "pcap timestamp beyond 2^32 s")
        })?;
        let nanos = (t_ns % 1_000_000_000) as u32;
        self.buf.clear();
        encode_ipv4(pkt, &mut self.buf);
        let orig_len = pkt.size_bytes;
        let incl_len = orig_len.min(self.snaplen).min(self.buf.len() as u32);
        let mut rec = [0u8; PCAP_RECORD_HEADER_BYTES];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&nanos.to_le_bytes());
        rec[8..12].copy_from_slice(&incl_len.to_le_bytes());
        rec[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(&self.buf[..incl_len as usize])?;
        self.packets += 1;
        Ok(())
    }

    /// Flushes buffered records; returns the first error of the whole file's output.
    pub fn finish(self) -> io::Result<()> {
        self.into_inner().map(drop)
    }

    /// Flushes and returns the sink.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Appends the full IPv4 datagram for `pkt` to `out`: `pkt.size_bytes` bytes, the headers as
/// described in the [module documentation](self), correct IPv4 and TCP/UDP checksums, and a
/// zero-filled payload.
///
/// `size_bytes` must equal 20 + transport header + payload (it does for packets built with
/// [`Packet::tcp`]); this is checked in debug builds. In release builds the datagram is
/// `size_bytes` long regardless (headers first, the rest zeros).
pub fn encode_ipv4(pkt: &Packet, out: &mut Vec<u8>) {
    let start = out.len();
    let total = pkt.size_bytes;
    debug_assert!(total <= u16::MAX as u32, "IPv4 datagram of {total} bytes");
    let src = Packet::node_ipv4(pkt.src);
    let dst = Packet::node_ipv4(pkt.dst);
    let proto = match pkt.transport {
        Transport::Tcp(_) => IPPROTO_TCP,
        Transport::Udp { .. } => IPPROTO_UDP,
    };

    // IPv4 header (RFC 791 §3.1).
    let mut ip = [0u8; IPV4_HEADER_BYTES as usize];
    ip[0] = 0x45; // version 4, IHL 5 words
    ip[1] = 0; // DSCP 0, not-ECT
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    // identification 0 (ip[4..6]); flags DF, fragment offset 0:
    ip[6] = 0x40;
    ip[8] = IPV4_TTL;
    ip[9] = proto;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let ck = checksum_fold(sum_be16(&ip, 0));
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    out.extend_from_slice(&ip);

    // Transport length as the IP header states it.
    let seg_len = total.saturating_sub(IPV4_HEADER_BYTES);
    let pseudo = pseudo_header_sum(&src, &dst, proto, seg_len);
    let thdr_start = out.len();
    match pkt.transport {
        Transport::Tcp(h) => {
            debug_assert_eq!(
                total,
                IPV4_HEADER_BYTES + h.header_bytes() + h.payload_bytes,
                "size_bytes disagrees with the TCP header: {h:?}"
            );
            encode_tcp_header(&h, out);
            let ck = checksum_fold(sum_be16(&out[thdr_start..], pseudo));
            out[thdr_start + 16..thdr_start + 18].copy_from_slice(&ck.to_be_bytes());
        }
        Transport::Udp {
            src_port,
            dst_port,
            payload_bytes,
        } => {
            debug_assert_eq!(
                total,
                IPV4_HEADER_BYTES + UDP_HEADER_BYTES + payload_bytes,
                "size_bytes disagrees with the UDP payload"
            );
            out.extend_from_slice(&src_port.to_be_bytes());
            out.extend_from_slice(&dst_port.to_be_bytes());
            out.extend_from_slice(&(seg_len as u16).to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            let mut ck = checksum_fold(sum_be16(&out[thdr_start..], pseudo));
            if ck == 0 {
                ck = 0xffff; // RFC 768: a computed 0 is transmitted as all ones
            }
            out[thdr_start + 6..thdr_start + 8].copy_from_slice(&ck.to_be_bytes());
        }
    }
    // Zero payload up to the datagram's total length.
    out.resize(start + total.max(IPV4_HEADER_BYTES) as usize, 0);
}

/// Appends the TCP header with options and a zero checksum field (RFC 793 §3.1).
fn encode_tcp_header(h: &TcpHeader, out: &mut Vec<u8>) {
    let hdr_start = out.len();
    let hlen = h.header_bytes();
    debug_assert!(
        hlen <= 60 && hlen.is_multiple_of(4),
        "TCP header of {hlen} bytes"
    );
    out.extend_from_slice(&h.src_port.to_be_bytes());
    out.extend_from_slice(&h.dst_port.to_be_bytes());
    out.extend_from_slice(&h.seq.to_be_bytes());
    out.extend_from_slice(&h.ack.to_be_bytes());
    out.push(((hlen / 4) as u8) << 4); // data offset; reserved bits 0
    out.push(h.flags);
    out.extend_from_slice(&h.window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum (filled by the caller), urgent pointer
    debug_assert_eq!(out.len() - hdr_start, TCP_BASE_HEADER_BYTES as usize);
    encode_tcp_options(h, out);
    debug_assert_eq!(
        out.len() - hdr_start,
        hlen as usize,
        "options layout vs option_bytes: {h:?}"
    );
}

/// Appends the TCP options of `h` in Linux's layout (see the module documentation); their
/// length is exactly [`TcpHeader::option_bytes`].
fn encode_tcp_options(h: &TcpHeader, out: &mut Vec<u8>) {
    let ts = |out: &mut Vec<u8>, (val, ecr): (u32, u32)| {
        out.extend_from_slice(&[TCPOPT_TIMESTAMP, 10]);
        out.extend_from_slice(&val.to_be_bytes());
        out.extend_from_slice(&ecr.to_be_bytes());
    };
    if let Some(syn) = h.syn {
        out.extend_from_slice(&[TCPOPT_MSS, 4]);
        out.extend_from_slice(&syn.mss.to_be_bytes());
        if let Some(t) = h.ts {
            if syn.sack_permitted {
                out.extend_from_slice(&[TCPOPT_SACK_PERM, 2]);
            } else {
                out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP]);
            }
            ts(out, t);
        } else if syn.sack_permitted {
            out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK_PERM, 2]);
        }
        if let Some(shift) = syn.wscale {
            out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_WINDOW, 3, shift]);
        }
    } else {
        if let Some(t) = h.ts {
            out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP]);
            ts(out, t);
        }
        let n = h.sack_len.min(h.sack.len() as u8) as usize;
        if n > 0 {
            out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK, 2 + 8 * n as u8]);
            for &(left, right) in &h.sack[..n] {
                out.extend_from_slice(&left.to_be_bytes());
                out.extend_from_slice(&right.to_be_bytes());
            }
        }
    }
}

/// One's-complement sum of the pseudo-header (RFC 793 §3.1, RFC 768), unfolded.
fn pseudo_header_sum(src: &[u8; 4], dst: &[u8; 4], proto: u8, seg_len: u32) -> u32 {
    let mut acc = sum_be16(src, 0);
    acc = sum_be16(dst, acc);
    acc += proto as u32;
    acc += seg_len & 0xffff;
    acc
}

/// Adds `data` as big-endian 16-bit words (a trailing odd byte padded with zero) to `acc`.
/// The result is unfolded; at most 2^16 words may be summed before folding.
fn sum_be16(data: &[u8], mut acc: u32) -> u32 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = words.remainder() {
        acc += (*last as u32) << 8;
    }
    acc
}

/// Folds the carries of a one's-complement sum and complements it (RFC 1071).
fn checksum_fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, SynOptions};

    fn fold(acc: u32) -> u16 {
        !checksum_fold(acc)
    }

    fn syn_header(ts: bool, sack_permitted: bool, wscale: Option<u8>) -> TcpHeader {
        TcpHeader {
            src_port: 40000,
            dst_port: 8080,
            seq: 0xdead_beef,
            flags: flags::SYN,
            window: 64240,
            ts: ts.then_some((0x0102_0304, 0)),
            syn: Some(SynOptions {
                mss: 1460,
                wscale,
                sack_permitted,
            }),
            ..Default::default()
        }
    }

    fn data_header(ts: bool, sack: &[(u32, u32)], payload: u32) -> TcpHeader {
        let mut h = TcpHeader {
            src_port: 8080,
            dst_port: 40000,
            seq: 0xffff_fff0,
            ack: 12345,
            flags: flags::ACK,
            window: 501,
            ts: ts.then_some((7, 9)),
            payload_bytes: payload,
            ..Default::default()
        };
        h.sack[..sack.len()].copy_from_slice(sack);
        h.sack_len = sack.len() as u8;
        h
    }

    fn options_of(h: &TcpHeader) -> Vec<u8> {
        let mut v = Vec::new();
        encode_tcp_options(h, &mut v);
        v
    }

    fn all_variants() -> Vec<TcpHeader> {
        let mut v = Vec::new();
        for ts in [false, true] {
            for sp in [false, true] {
                for ws in [None, Some(0), Some(7), Some(14)] {
                    v.push(syn_header(ts, sp, ws));
                }
            }
            for n in 0..=3 {
                let blocks = [(100, 200), (300, 400), (500, 600)];
                v.push(data_header(ts, &blocks[..n], 0));
                v.push(data_header(ts, &blocks[..n], 1448));
            }
        }
        v
    }

    #[test]
    fn checksum_of_known_ipv4_header() {
        // The classic example header (RFC 1071-style worked example, checksum 0xb861).
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let ck = checksum_fold(sum_be16(&h, 0));
        assert_eq!(ck, 0xb861);
        h[10..12].copy_from_slice(&ck.to_be_bytes());
        assert_eq!(fold(sum_be16(&h, 0)), 0xffff);
        // Odd length: trailing byte padded with zero.
        assert_eq!(sum_be16(&[0x12, 0x34, 0x56], 0), 0x1234 + 0x5600);
    }

    /// Recomputes the IPv4 and transport checksums of an encoded datagram: including the
    /// checksum fields, the sums fold to 0xffff.
    fn verify_checksums(bytes: &[u8]) {
        assert_eq!(
            fold(sum_be16(&bytes[..20], 0)),
            0xffff,
            "IPv4 header checksum"
        );
        let total = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
        assert_eq!(total, bytes.len());
        let src: [u8; 4] = bytes[12..16].try_into().unwrap();
        let dst: [u8; 4] = bytes[16..20].try_into().unwrap();
        let pseudo = pseudo_header_sum(&src, &dst, bytes[9], (total - 20) as u32);
        assert_eq!(
            fold(sum_be16(&bytes[20..], pseudo)),
            0xffff,
            "transport checksum"
        );
    }

    #[test]
    fn encoded_tcp_packets_have_valid_checksums_and_layout() {
        for h in all_variants() {
            let pkt = Packet::tcp(3, 7, 0, true, h);
            let mut bytes = vec![0xaa]; // encode_ipv4 appends
            encode_ipv4(&pkt, &mut bytes);
            let bytes = &bytes[1..];
            assert_eq!(bytes.len() as u32, pkt.size_bytes);
            verify_checksums(bytes);
            assert_eq!(bytes[0], 0x45);
            assert_eq!(&bytes[6..10], &[0x40, 0, 64, 6]);
            assert_eq!(&bytes[12..16], &Packet::node_ipv4(3));
            assert_eq!(&bytes[16..20], &Packet::node_ipv4(7));
            let tcp = &bytes[20..];
            assert_eq!(u16::from_be_bytes([tcp[0], tcp[1]]), h.src_port);
            assert_eq!(u32::from_be_bytes(tcp[4..8].try_into().unwrap()), h.seq);
            assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), h.ack);
            assert_eq!((tcp[12] >> 4) as u32 * 4, h.header_bytes());
            assert_eq!(tcp[13], h.flags);
            assert_eq!(u16::from_be_bytes([tcp[14], tcp[15]]), h.window);
            let hl = h.header_bytes() as usize;
            assert_eq!(&tcp[20..hl], &options_of(&h)[..]);
            assert!(tcp[hl..].iter().all(|&b| b == 0), "payload is zeros");
        }
    }

    #[test]
    fn option_lengths_match_option_bytes() {
        for h in all_variants() {
            let o = options_of(&h);
            assert_eq!(o.len() as u32, h.option_bytes(), "{h:?}");
            assert_eq!(o.len() % 4, 0);
            // Walk the options: every one is well-formed and they fill the space exactly.
            let mut i = 0;
            while i < o.len() {
                match o[i] {
                    TCPOPT_NOP => i += 1,
                    0 => panic!("unexpected EOL"),
                    _ => {
                        let len = o[i + 1] as usize;
                        assert!(len >= 2 && i + len <= o.len(), "{o:?}");
                        i += len;
                    }
                }
            }
            assert_eq!(i, o.len());
        }
    }

    #[test]
    fn option_bytes_are_linux_layout() {
        // SYN as Linux sends it by default: MSS, SACK-perm, TS, NOP, WS.
        assert_eq!(
            options_of(&syn_header(true, true, Some(7))),
            [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7]
        );
        assert_eq!(
            options_of(&syn_header(true, false, None)),
            [2, 4, 0x05, 0xb4, 1, 1, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0]
        );
        assert_eq!(
            options_of(&syn_header(false, true, Some(2))),
            [2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 2]
        );
        assert_eq!(
            options_of(&syn_header(false, false, None)),
            [2, 4, 0x05, 0xb4]
        );
        assert_eq!(
            options_of(&data_header(true, &[], 1448)),
            [1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9]
        );
        assert_eq!(options_of(&data_header(false, &[], 1448)), [0u8; 0]);
        assert_eq!(
            options_of(&data_header(true, &[(0x10, 0x20)], 0)),
            [1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9, 1, 1, 5, 10, 0, 0, 0, 0x10, 0, 0, 0, 0x20]
        );
        // Three blocks with timestamps: the 40-byte maximum.
        assert_eq!(
            options_of(&data_header(true, &[(1, 2), (3, 4), (5, 6)], 0)).len(),
            40
        );
    }

    #[test]
    fn udp_encoding() {
        let pkt = Packet {
            src: 0,
            dst: 1,
            size_bytes: 20 + 8 + 1001,
            conn: 0,
            to_server: false,
            sent_ns: 0,
            transport: Transport::Udp {
                src_port: 5000,
                dst_port: 6000,
                payload_bytes: 1001,
            },
        };
        let mut bytes = Vec::new();
        encode_ipv4(&pkt, &mut bytes);
        assert_eq!(bytes.len(), 1029);
        assert_eq!(bytes[9], 17);
        assert_eq!(&bytes[20..26], &[0x13, 0x88, 0x17, 0x70, 0x03, 0xf1]);
        assert_ne!(&bytes[26..28], &[0, 0]);
        verify_checksums(&bytes);
    }

    #[test]
    fn file_header_fields() {
        let w = PcapWriter::new(Vec::new(), 96).unwrap();
        assert_eq!(w.snaplen(), 96);
        let b = w.into_inner().unwrap();
        assert_eq!(b.len(), PCAP_FILE_HEADER_BYTES);
        assert_eq!(&b[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u16::from_le_bytes([b[4], b[5]]), 2);
        assert_eq!(u16::from_le_bytes([b[6], b[7]]), 4);
        assert_eq!(&b[8..16], &[0; 8]);
        assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 96);
        assert_eq!(
            u32::from_le_bytes(b[20..24].try_into().unwrap()),
            LINKTYPE_RAW
        );
        assert!(PcapWriter::new(Vec::new(), 0).is_err());
    }

    #[test]
    fn records_truncate_to_snaplen() {
        let data = Packet::tcp(0, 1, 0, true, data_header(true, &[], 1448));
        let ack = Packet::tcp(1, 0, 0, false, data_header(true, &[(1, 2)], 0));
        assert_eq!((data.size_bytes, ack.size_bytes), (1500, 64));
        let mut w = PcapWriter::new(Vec::new(), 96).unwrap();
        w.write_packet(1_234_567_890_123, &data).unwrap();
        w.write_packet(1_234_567_890_124, &ack).unwrap();
        assert_eq!(w.packets(), 2);
        let b = w.into_inner().unwrap();
        let le = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let r = PCAP_FILE_HEADER_BYTES;
        assert_eq!((le(r), le(r + 4)), (1234, 567_890_123));
        assert_eq!((le(r + 8), le(r + 12)), (96, 1500));
        let mut full = Vec::new();
        encode_ipv4(&data, &mut full);
        assert_eq!(&b[r + 16..r + 16 + 96], &full[..96]);
        let r2 = r + 16 + 96;
        assert_eq!((le(r2), le(r2 + 4)), (1234, 567_890_124));
        assert_eq!((le(r2 + 8), le(r2 + 12)), (64, 64));
        assert_eq!(b.len(), r2 + 16 + 64);

        // A snaplen above every packet keeps them whole.
        let mut w = PcapWriter::new(Vec::new(), 65535).unwrap();
        w.write_packet(0, &data).unwrap();
        let b = w.into_inner().unwrap();
        let le = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        assert_eq!((le(r + 8), le(r + 12)), (1500, 1500));
        assert_eq!(b.len(), r + 16 + 1500);
    }

    #[test]
    fn create_writes_a_file() {
        let dir = std::env::temp_dir().join(format!("haslab-pcap-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pcap");
        let mut w = PcapWriter::create(&path, 128).unwrap();
        w.write_packet(5, &Packet::tcp(0, 1, 0, true, data_header(true, &[], 100)))
            .unwrap();
        w.finish().unwrap();
        let b = std::fs::read(&path).unwrap();
        assert_eq!(b.len(), 24 + 16 + 128);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
