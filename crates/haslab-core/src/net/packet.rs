//! Packets as they cross links. A packet is a small `Copy` value: headers that matter to the
//! simulation (TCP sequence numbers on the wire, flags, window, timestamps, options) and the
//! total IP size that serialisation counts. Payload bytes are not materialised.
//!
//! While a packet is in the network it stays in one place, a slot of the world's
//! [`PacketStore`], and the links carry a [`Frame`] instead: the few fields that forwarding,
//! queueing and serialisation read, and the slot. Only the two ends read the headers (the
//! sending endpoint writes them, the receiving one reads them), so a hop copies a 16-byte
//! frame through the queue and the pipe rather than the whole packet.

/// IPv4 header without options.
pub const IPV4_HEADER_BYTES: u32 = 20;
/// TCP header without options.
pub const TCP_BASE_HEADER_BYTES: u32 = 20;
/// The timestamps option as Linux sends it on data and ACKs: NOP, NOP, kind 8 (10 bytes).
pub const TCP_TS_OPTION_BYTES: u32 = 12;

pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

/// Options carried by a SYN or SYN-ACK (laid out by [`TcpHeader::option_bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynOptions {
    pub mss: u16,
    /// Window-scale shift (RFC 7323), None if not offered.
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
}

/// A TCP header. Sequence and acknowledgement numbers are the 32-bit values on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// Window field as sent (already right-shifted by the sender's window scale).
    pub window: u16,
    /// Timestamps option (TSval, TSecr) if present.
    pub ts: Option<(u32, u32)>,
    /// SYN options (only on SYN segments).
    pub syn: Option<SynOptions>,
    /// SACK blocks (wire sequence numbers), `sack_len` of them valid.
    pub sack: [(u32, u32); 3],
    pub sack_len: u8,
    /// Payload bytes.
    pub payload_bytes: u32,
}

impl TcpHeader {
    /// Length of the options, padded to a multiple of 4, as Linux lays them out:
    /// SYN: MSS(4) [SACK-perm+TS (12) | NOP NOP TS (12) | SACK-perm NOP NOP (4)] [NOP WS (4)];
    /// other segments: NOP NOP TS (12) and NOP NOP SACK (2 + 8·n + 2 padding).
    pub fn option_bytes(&self) -> u32 {
        let mut n = 0;
        if let Some(syn) = self.syn {
            n += 4; // MSS
            if self.ts.is_some() {
                n += 12; // (SACK-perm | NOP NOP) + TS
            } else if syn.sack_permitted {
                n += 4;
            }
            if syn.wscale.is_some() {
                n += 4;
            }
        } else {
            if self.ts.is_some() {
                n += 12;
            }
            if self.sack_len > 0 {
                n += 4 + 8 * self.sack_len as u32;
            }
        }
        n
    }
    /// TCP header length including options.
    pub fn header_bytes(&self) -> u32 {
        TCP_BASE_HEADER_BYTES + self.option_bytes()
    }
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// What a packet carries above IP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp(TcpHeader),
    /// A datagram (cross-traffic); `flow` identifies its generator.
    Udp {
        src_port: u16,
        dst_port: u16,
        payload_bytes: u32,
    },
}

/// A packet in the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Source and destination nodes (indices into the topology).
    pub src: u32,
    pub dst: u32,
    /// Total IP datagram size on the wire, bytes (what serialisation counts).
    pub size_bytes: u32,
    /// Connection (or traffic-generator) index: the simulator's demultiplexing shortcut,
    /// equivalent to the 5-tuple.
    pub conn: u32,
    /// True if travelling toward the connection's server (the accepting side).
    pub to_server: bool,
    /// Time the sending endpoint put the packet on the network (one-way delay statistics).
    pub sent_ns: u64,
    pub transport: Transport,
}

/// What a link direction carries for a packet (module doc): what forwarding, the queue and
/// serialisation read, and where the packet itself is. Sixteen bytes, so that it is passed in
/// two registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The packet's destination node ([`Packet::dst`]).
    pub dst: u32,
    /// Total IP datagram size on the wire ([`Packet::size_bytes`]).
    pub size_bytes: u32,
    /// When the packet entered its current link direction, as a run-wide count of packets that
    /// entered one (wrapping at 2^32): among arrivals at the same nanosecond, the packet that
    /// entered its link first arrives first (`sim::events`). Set by the world.
    pub stamp: u32,
    /// The packet's slot in the [`PacketStore`].
    pub slot: u32,
}

impl Frame {
    /// The frame of `pkt`, kept in slot `slot`.
    #[inline]
    pub fn of(pkt: &Packet, slot: u32) -> Frame {
        Frame {
            dst: pkt.dst,
            size_bytes: pkt.size_bytes,
            stamp: 0,
            slot,
        }
    }
}

/// The packets in the network, each in a slot from the moment it is sent until it is delivered
/// or lost ([`Frame::slot`]). A freed slot is the next one taken, so the slots in use stay few
/// and recently touched.
#[derive(Debug, Default)]
pub struct PacketStore {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketStore {
    /// Stores a copy of `pkt` and returns its frame.
    #[inline]
    pub fn put(&mut self, pkt: &Packet) -> Frame {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = *pkt;
                slot
            }
            None => {
                self.slots.push(*pkt);
                (self.slots.len() - 1) as u32
            }
        };
        Frame::of(pkt, slot)
    }
    /// Stores a copy of `pkt` sent at `sent_ns` ([`Packet::sent_ns`]) and returns its frame.
    #[inline]
    pub fn put_sent(&mut self, pkt: &Packet, sent_ns: u64) -> Frame {
        let frame = self.put(pkt);
        self.slots[frame.slot as usize].sent_ns = sent_ns;
        frame
    }
    /// The packet in `slot`.
    #[inline]
    pub fn get(&self, slot: u32) -> &Packet {
        &self.slots[slot as usize]
    }
    /// Frees `slot` (its packet was delivered, lost or dropped).
    #[inline]
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }
    /// How many slots hold a packet (taken and not released): the packets in the network.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl Packet {
    /// A TCP packet; its size is computed from the header.
    pub fn tcp(src: u32, dst: u32, conn: u32, to_server: bool, h: TcpHeader) -> Packet {
        Packet {
            src,
            dst,
            size_bytes: IPV4_HEADER_BYTES + h.header_bytes() + h.payload_bytes,
            conn,
            to_server,
            sent_ns: 0,
            transport: Transport::Tcp(h),
        }
    }
    /// The TCP payload it carries (0 for a datagram).
    #[inline]
    pub fn tcp_payload_bytes(&self) -> u32 {
        match &self.transport {
            Transport::Tcp(h) => h.payload_bytes,
            Transport::Udp { .. } => 0,
        }
    }
    /// The IPv4 address a node is shown with in pcap files: 198.18.0.0/15, the benchmarking
    /// range (RFC 2544), node i ↦ 198.18.0.0 + i + 1.
    pub fn node_ipv4(node: u32) -> [u8; 4] {
        let a = 0xC612_0000u32 + node + 1;
        a.to_be_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_match_linux_on_the_wire() {
        let data = TcpHeader {
            ts: Some((1, 2)),
            payload_bytes: 1448,
            ..Default::default()
        };
        assert_eq!(Packet::tcp(0, 1, 0, true, data).size_bytes, 1500);
        let ack = TcpHeader {
            ts: Some((1, 2)),
            ..Default::default()
        };
        assert_eq!(Packet::tcp(0, 1, 0, true, ack).size_bytes, 52);
        let syn = TcpHeader {
            ts: Some((1, 0)),
            syn: Some(SynOptions {
                mss: 1460,
                wscale: Some(7),
                sack_permitted: true,
            }),
            ..Default::default()
        };
        assert_eq!(Packet::tcp(0, 1, 0, true, syn).size_bytes, 60);
        let plain = TcpHeader {
            payload_bytes: 1460,
            ..Default::default()
        };
        assert_eq!(Packet::tcp(0, 1, 0, true, plain).size_bytes, 1500);
    }
}
