//! The network: packets, point-to-point links with their output queues (fixed rate or a
//! Mahimahi trace), routing, pcap.
pub mod closed_form;
pub mod link;
pub mod mahimahi;
pub mod packet;
pub mod pcap;
pub mod queue;
pub mod routing;
