//! The network: packets, point-to-point links with their output queues, routing, pcap.
pub mod link;
pub mod packet;
pub mod pcap;
pub mod queue;
pub mod routing;
