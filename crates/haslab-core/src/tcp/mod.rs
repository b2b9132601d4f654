//! TCP: one connection is two [`endpoint::Endpoint`]s (client and server), each a full-duplex
//! socket with a send half (segmentation, cwnd, loss recovery, RTO) and a receive half
//! (reassembly, delayed ACKs). Congestion control is pluggable ([`cc`]), and so are
//! congestion-window validation ([`cwv`]) and the per-chunk sender mechanisms of the
//! Enhancing-TCP paper ([`sender_hook`]).
pub mod cc;
pub mod config;
pub mod conn;
pub mod cwv;
pub mod delack;
pub mod endpoint;
pub mod newcwv;
pub mod novel_pacing;
pub mod pacing;
pub mod rate;
pub mod rcvbuf;
pub mod rtl;
pub mod rtt;
pub mod scoreboard;
pub mod sender_hook;
pub mod seq;
pub mod timer_clock;
