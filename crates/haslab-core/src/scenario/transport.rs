//! Named transports: the server-side TCP configurations the papers compare, each one name for
//! a congestion control plus `[flow.tcp]` options. A flow or a player selects one with
//! `transport = "newcwv-paced"`; its own `cc` and `tcp` keys override the transport's (see
//! `scenario/validate.rs`, `resolve_transport`). This table is the one definition: the CLI
//! (`haslab cc list`, `haslab describe`), Python (`haslab.catalog()["transports"]`) and the
//! reproductions all read it.
//!
//! - **newCWV paper** (Nazir et al., NOSSDAV 2014, §3): the evaluated transport is NewReno +
//!   newCWV (RFC 7661) + pacing at cwnd/RTT on persistent connections (`newcwv-paced`); its
//!   middle line is newCWV without pacing (`newcwv`); the baseline is "a default configuration
//!   of TCP New Reno" on Linux, whose restart after idle is Linux's (`newreno-linux`); RFC 5681
//!   §4.1's restart (cwnd = min(IW, cwnd) after an idle RTO) is the standard one
//!   (`newreno-rfc5681`).
//! - **Enhancing-TCP paper** (Liu, Men, Zhang, §3–4): the server runs CUBIC in NS2. "Standard
//!   TCP" is `cubic-standard`; "enhanced TCP" is CUBIC + novel pacing + RTL
//!   (`cubic-enhanced`); `cubic-tlp` is the standard answer to tail loss (RACK-TLP, RFC 8985,
//!   which needs SACK) as a third line. NS2's TCP-Linux agent (how CUBIC runs in NS2) has no
//!   restart after idle, so all three keep cwnd across idle periods (`idle_restart = "off"`);
//!   the two paper lines run without SACK, like NS2's agent, so RTL alone repairs tail losses.
//!   The novel-pacing flowchart's "decayed cwnd after a long idle" then never triggers; set
//!   `idle_restart = "linux"` on the flow to see it. All three carry NS-2's defaults (`NS2`):
//!   1000-byte segments, IW 2, no timestamps, 200 ms minimum RTO, an ACK for every segment.

use serde_json::{json, Map, Value};

/// One named transport.
#[derive(Clone, Debug)]
pub struct Transport {
    /// The name used in scenarios (`transport = "..."`).
    pub name: &'static str,
    /// Where the combination comes from.
    pub source: &'static str,
    /// What it is, in one sentence.
    pub description: &'static str,
    /// Congestion-control algorithm name (a `cc` value).
    pub cc: &'static str,
    /// The algorithm's parameters, as (key, value) (empty: its defaults).
    pub cc_params: &'static [(&'static str, TcpValue)],
    /// `[flow.tcp]` options, as (key, TOML/JSON value).
    pub tcp: &'static [(&'static str, TcpValue)],
}

/// A value of a `[flow.tcp]` option in [`Transport::tcp`].
#[derive(Clone, Copy, Debug)]
pub enum TcpValue {
    Str(&'static str),
    Bool(bool),
    Int(u64),
}

impl TcpValue {
    fn json(self) -> Value {
        match self {
            TcpValue::Str(s) => Value::String(s.into()),
            TcpValue::Bool(b) => Value::Bool(b),
            TcpValue::Int(i) => Value::from(i),
        }
    }
}

use TcpValue::{Bool, Int, Str};

/// One `[flow.tcp]` table from a shared `base` and a transport's own `extra` options, in a
/// constant (`N` is the two lengths' sum; a wrong `N` fails the build).
const fn join<const A: usize, const B: usize, const N: usize>(
    base: [(&'static str, TcpValue); A],
    extra: [(&'static str, TcpValue); B],
) -> [(&'static str, TcpValue); N] {
    assert!(A + B == N, "join: N must be the sum of the two lengths");
    let mut out = [("", Bool(false)); N];
    let mut i = 0;
    while i < A {
        out[i] = base[i];
        i += 1;
    }
    while i < N {
        out[i] = extra[i - A];
        i += 1;
    }
    out
}

/// NS-2's TCP defaults that haslab can express (tcl/lib/ns-default.tcl and tcp/tcp-sink.cc):
/// `packetSize_ 1000` (payload bytes per segment), `windowInit_ 2`, `timestamps_ false`,
/// `minrto_ 0.2` s, and Agent/TCPSink acknowledging every segment (delayed ACKs are the
/// separate Agent/TCPSink/DelAck), and no F-RTO (`frto_enabled_ 0`, `sfrto_enabled_ 0`).
const NS2: [(&str, TcpValue); 6] = [
    ("mss", Int(1000)),
    ("initial_cwnd", Int(2)),
    ("timestamps", Bool(false)),
    ("min_rto", Str("200ms")),
    ("delayed_ack", Str("off")),
    ("frto", Bool(false)),
];

/// ns-3.17's socket defaults and TcpSocketBase rules that haslab can express, shared by the
/// `ns3.17-tcp` (TcpNewReno) and `ns3.17-westwood` (TcpWestwood) transports; each adds how its
/// class ends a fast recovery.
const NS3_17: [(&str, TcpValue); 21] = [
    ("mss", Int(536)),
    ("initial_cwnd", Int(1)),
    ("timestamps", Bool(false)),
    ("sack", Bool(false)),
    ("tlp", Bool(false)),
    ("rwnd", Int(65_535)),
    ("delayed_ack", Str("on")),
    ("delayed_ack_timeout", Str("200ms")),
    ("min_rto", Str("200ms")),
    ("rto_formula", Str("ns3.17")),
    ("limited_transmit", Bool(false)),
    ("recover_guard", Bool(false)),
    ("recovery", Str("classic")),
    ("cwnd_growth", Str("per-ack")),
    ("window_accounting", Str("bytes")),
    // TcpNewReno::Retransmit and TcpWestwood::Retransmit recompute ssthresh on every RTO, a
    // repeated one too, TcpNewReno from everything outstanding (BytesInFlight)
    ("rto_ssthresh", Str("every")),
    // TcpSocketBase undoes no RTO: no Eifel detection, no F-RTO
    ("rto_undo", Bool(false)),
    ("frto", Bool(false)),
    ("rto_restart_on_retransmit", Bool(false)),
    ("idle_restart", Str("off")),
    ("pacing", Str("off")),
];

/// `ns3.17-tcp`: TcpNewReno's end of a fast recovery (`TcpNewReno::NewAck`, option 1).
const NS3_17_TCP: [(&str, TcpValue); 22] = join(NS3_17, [("full_ack_exit", Str("flight"))]);
/// `ns3.17-westwood`: TcpWestwood's Reno fast recovery (`DupAck`, `NewAck`).
const NS3_17_WESTWOOD: [(&str, TcpValue); 24] = join(
    NS3_17,
    [
        ("full_ack_exit", Str("ssthresh")),
        ("recovery_end", Str("new-ack")),
        ("recovery_entry_cwnd", Str("min")),
    ],
);

/// `cubic-standard`: NS-2's defaults and its own options.
const CUBIC_STANDARD: [(&str, TcpValue); 11] = join(
    NS2,
    [
        ("idle_restart", Str("off")),
        ("sack", Bool(false)),
        ("tlp", Bool(false)),
        ("novel_pacing", Bool(false)),
        ("rtl", Bool(false)),
    ],
);
/// `cubic-enhanced`: NS-2's defaults and its own options.
const CUBIC_ENHANCED: [(&str, TcpValue); 11] = join(
    NS2,
    [
        ("idle_restart", Str("off")),
        ("sack", Bool(false)),
        ("tlp", Bool(false)),
        ("novel_pacing", Bool(true)),
        ("rtl", Bool(true)),
    ],
);
/// `cubic-tlp`: NS-2's defaults and its own options.
const CUBIC_TLP: [(&str, TcpValue); 11] = join(
    NS2,
    [
        ("idle_restart", Str("off")),
        ("sack", Bool(true)),
        ("tlp", Bool(true)),
        ("novel_pacing", Bool(false)),
        ("rtl", Bool(false)),
    ],
);

/// Every named transport, in the order `haslab cc list` prints them.
pub const TRANSPORTS: &[Transport] = &[
    Transport {
        name: "ns3-newreno",
        source: "ns-3.37 TcpNewReno over TcpSocketBase with its default attributes \
                 (src/internet/model/tcp-congestion-ops.cc, tcp-socket-base.cc, tcp-socket.cc, \
                 tcp-prr-recovery.cc, rtt-estimator.cc)",
        description: "ns-3's default-configured NewReno sender: per-ACK growth (also when \
                      application-limited, on ACKs that cover SACKed data), cwnd and flight counted in bytes, ssthresh = max(2, flight/2), PRR, impatient \
                      partial-ACK timer, ssthresh recomputed by an RTO in recovery, no undo of spurious RTOs, \
                      a fast recovery allowed once the cumulative ACK reaches the recovery point, \
                      the congestion control's pkts_acked where ns-3 calls PktsAcked (with the smoothed RTT), 536-byte segments, IW 10, SACK and timestamps, \
                      min RTO 1 s (RFC 6298 formula), max RTO 60 s, 200 ms delayed ACKs, \
                      128 KiB receive buffer, no restart after idle",
        cc: "newreno",
        cc_params: &[
            ("grow_when_app_limited", Bool(true)),
            ("ssthresh", Str("flight")),
        ],
        tcp: &[
            ("mss", Int(536)),
            ("initial_cwnd", Int(10)),
            ("timestamps", Bool(true)),
            ("sack", Bool(true)),
            ("tlp", Bool(false)),
            ("delayed_ack", Str("on")),
            ("delayed_ack_timeout", Str("200ms")),
            ("min_rto", Str("1s")),
            ("max_rto", Str("60s")),
            ("rto_formula", Str("rfc6298")),
            ("rwnd", Int(131_072)),
            ("recovery", Str("prr")),
            ("cwnd_growth", Str("per-ack")),
            ("growth_count", Str("cumulative")),
            ("window_accounting", Str("bytes")),
            ("partial_ack_rto", Str("impatient")),
            ("rto_ssthresh", Str("every-in-flight")),
            ("rto_undo", Bool(false)),
            ("frto", Bool(false)),
            ("rto_restart_on_retransmit", Bool(false)),
            ("rto_restart_on_sack_advance", Bool(false)),
            ("rtt_sampling", Str("ts-echo")),
            ("ca_sample", Str("ns3")),
            ("prr_variant", Str("ns3")),
            ("nextseg_rule3", Bool(true)),
            ("partial_ack_retransmit", Str("forced")),
            ("recover_covers", Str("reach")),
            ("idle_restart", Str("off")),
            ("pacing", Str("off")),
        ],
    },
    Transport {
        name: "ns3.17-tcp",
        source: "ns-3.17, the TcpHas paper's simulator (§IV-A): TcpSocket defaults \
                 (src/internet/model/tcp-socket.cc: SegmentSize 536, InitialCwnd 1, \
                 DelAckTimeout 200 ms, DelAckCount 2), TcpSocketBase without TCP options \
                 (no timestamps, SACK or window scaling: a 65535-byte window), RttEstimator \
                 MinRTO 200 ms with RttMeanDeviation (rtt-estimator.cc: gain 0.1, RTO in \
                 whole ms), TcpNewReno (tcp-newreno.cc: +1 segment per ACK in slow start, \
                 MSS²/cwnd per ACK in congestion avoidance, ssthresh = max(2, flight/2), \
                 LimitedTransmit false, DupAck: fast recovery on any third duplicate ACK \
                 outside one, also after an RTO)",
        description: "the ns-3.17 sender of the TcpHas paper's simulations: 536-byte segments, \
                      IW 1, no TCP options, 64 KB window, per-ACK growth, cwnd and flight in bytes, 200 ms delayed ACKs, \
                      ns-3.17's RTT estimator and min RTO 200 ms, no limited transmit, fast \
                      recovery on any third duplicate ACK, no restart after idle; a player's own cc (Westwood+, \
                      TIBET, Trickle, TcpHas) replaces NewReno",
        cc: "newreno",
        cc_params: &[
            ("grow_when_app_limited", Bool(true)),
            ("ssthresh", Str("flight")),
        ],
        tcp: &NS3_17_TCP,
    },
    Transport {
        name: "ns3.17-westwood",
        source: "ns-3.17's TcpWestwood with ProtocolType WestwoodPlus and FilterType Tustin \
                 (src/internet/model/tcp-westwood.cc at the ns-3.17 tag), the class the TcpHas \
                 paper's Westwood+ runs on (§IV-C): the ns3.17-tcp socket defaults, Reno's \
                 fast recovery (`NewAck`: the first ACK of new data ends it with cwnd = \
                 ssthresh, no partial-ACK retransmission), `DupAck` on the third duplicate ACK \
                 outside a recovery: ssthresh = BWE × minRtt, cwnd = min(cwnd, ssthresh), then \
                 one segment per further duplicate ACK",
        description: "the ns-3.17 sender of ns3.17-tcp as ns-3.17's TcpWestwood (WestwoodPlus) \
                      runs it: Westwood+ with ns-3.17's estimator (every ACK counted while a \
                      sampling window is open), Reno fast recovery ending at the first new ACK, \
                      cwnd = min(cwnd, ssthresh) on fast retransmit",
        cc: "westwood+",
        cc_params: &[("estimator", Str("ns3.17"))],
        tcp: &NS3_17_WESTWOOD,
    },
    Transport {
        name: "newreno-rfc5681",
        source: "RFC 5681 §4.1; newCWV paper §2.1 (\"the current TCP standard\")",
        description: "NewReno; after an idle period longer than the RTO, cwnd = min(IW, cwnd)",
        cc: "newreno",
        cc_params: &[],
        tcp: &[("idle_restart", Str("rfc5681"))],
    },
    Transport {
        name: "newreno-linux",
        source: "newCWV paper §3 (default Linux TCP New Reno); Linux tcp_cwnd_restart",
        description: "NewReno with Linux's restart after idle (ssthresh = max(ssthresh, 3/4 cwnd), cwnd halved per idle RTO)",
        cc: "newreno",
        cc_params: &[],
        tcp: &[("idle_restart", Str("linux"))],
    },
    Transport {
        name: "newcwv",
        source: "newCWV paper §2.3, §4 (\"newCWV\" line); RFC 7661",
        description: "NewReno + newCWV: cwnd kept through idle and rate-limited periods, no pacing",
        cc: "newreno",
        cc_params: &[],
        tcp: &[("idle_restart", Str("newcwv")), ("pacing", Str("off"))],
    },
    Transport {
        name: "newcwv-paced",
        source: "newCWV paper §2.4, §3 (\"newCWV-pacing\": Linux 3.12 FQ pacing over one RTT)",
        description: "NewReno + newCWV + pacing at cwnd/RTT, the combination the paper evaluates",
        cc: "newreno",
        cc_params: &[],
        tcp: &[
            ("idle_restart", Str("newcwv")),
            ("pacing", Str("cwnd-per-rtt")),
        ],
    },
    Transport {
        name: "newcwv-paced-linux",
        source: "newCWV paper §3 (Linux 3.12 FQ pacing); Linux net/ipv4/tcp_output.c tcp_update_pacing_rate (tcp_pacing_ss_ratio 200, tcp_pacing_ca_ratio 120)",
        description: "NewReno + newCWV + Linux's pacing rate: 200 % of cwnd/RTT in slow start, 120 % in congestion avoidance",
        cc: "newreno",
        cc_params: &[],
        tcp: &[("idle_restart", Str("newcwv")), ("pacing", Str("linux"))],
    },
    Transport {
        name: "cubic-standard",
        source: "Enhancing-TCP paper §4.1 (\"standard TCP\": CUBIC in NS2)",
        description: "CUBIC, no SACK, no restart after idle (NS2's TCP-Linux agent)",
        cc: "cubic",
        cc_params: &[],
        tcp: &CUBIC_STANDARD,
    },
    Transport {
        name: "cubic-enhanced",
        source: "Enhancing-TCP paper §3 (\"enhanced TCP\")",
        description: "cubic-standard + novel pacing of each chunk's initial burst + Reducing Tail Loss dummies",
        cc: "cubic",
        cc_params: &[],
        tcp: &CUBIC_ENHANCED,
    },
    Transport {
        name: "cubic-tlp",
        source: "RFC 8985 (RACK-TLP), the standard tail-loss answer, against the Enhancing-TCP paper's RTL",
        description: "cubic-standard + SACK + RACK-TLP tail-loss probes",
        cc: "cubic",
        cc_params: &[],
        tcp: &CUBIC_TLP,
    },
];

/// The transport called `name`.
pub fn by_name(name: &str) -> Option<&'static Transport> {
    TRANSPORTS.iter().find(|t| t.name == name)
}

/// The accepted names, quoted and comma-separated (for error messages).
pub fn names() -> String {
    TRANSPORTS
        .iter()
        .map(|t| format!("\"{}\"", t.name))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Transport {
    /// The transport's `[flow.tcp]` options as a table.
    pub fn tcp_table(&self) -> Map<String, Value> {
        self.tcp
            .iter()
            .map(|(k, v)| (k.to_string(), v.json()))
            .collect()
    }

    /// The congestion control's parameters as a table.
    pub fn cc_params_table(&self) -> Map<String, Value> {
        self.cc_params
            .iter()
            .map(|(k, v)| (k.to_string(), v.json()))
            .collect()
    }

    /// The congestion control with its parameters.
    pub fn cc_config(&self) -> crate::tcp::cc::CcConfig {
        crate::tcp::cc::CcConfig::with_params(self.cc, Value::Object(self.cc_params_table()))
            .expect("the transport table names a known cc with valid parameters (tested)")
    }

    /// `{ name, source, description, cc, cc_params, tcp }` for catalogs.
    pub fn json(&self) -> Value {
        json!({
            "name": self.name,
            "source": self.source,
            "description": self.description,
            "cc": self.cc,
            "cc_params": Value::Object(self.cc_params_table()),
            "tcp": Value::Object(self.tcp_table()),
        })
    }
}

/// Every transport as JSON (for `haslab cc list --json` and Python).
pub fn catalog() -> Vec<Value> {
    TRANSPORTS.iter().map(Transport::json).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::CcConfig;
    use crate::tcp::config::{IdleRestart, PacingMode, TcpConfig};

    fn validate_tcp_table(t: &Map<String, Value>, _name: &str) -> Result<TcpConfig, String> {
        serde_json::from_value(Value::Object(t.clone())).map_err(|e| e.to_string())
    }

    #[test]
    fn every_transport_is_a_valid_cc_and_tcp_table() {
        for t in TRANSPORTS {
            assert!(CcConfig::by_name(t.cc).is_some(), "{}: cc {}", t.name, t.cc);
            CcConfig::with_params(t.cc, Value::Object(t.cc_params_table()))
                .unwrap_or_else(|e| panic!("{}: cc_params: {e}", t.name));
            let cfg = validate_tcp_table(&t.tcp_table(), t.name)
                .unwrap_or_else(|e| panic!("{}: {e}", t.name));
            cfg.check().unwrap();
        }
        let names: Vec<&str> = TRANSPORTS.iter().map(|t| t.name).collect();
        let mut dedup = names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), names.len(), "duplicate names");
    }

    #[test]
    fn the_ns3_17_sender_has_no_options_iw_1_and_per_ack_growth() {
        let t = by_name("ns3.17-tcp").unwrap();
        let c = validate_tcp_table(&t.tcp_table(), "x").unwrap();
        assert_eq!((c.mss, c.initial_cwnd), (536, 1));
        assert!(!c.timestamps && !c.sack && !c.tlp);
        assert_eq!(c.rwnd.0, 65_535, "no window scaling without options");
        assert_eq!(c.min_rto.0, 200_000_000);
        assert_eq!(c.cwnd_growth, crate::tcp::config::CwndGrowth::PerAck);
        assert_eq!(c.idle_restart, IdleRestart::Off);
    }

    /// ns-3.17's TcpWestwood and TcpNewReno share TcpSocketBase: the two ns-3.17 transports
    /// differ only in how a fast recovery begins and ends (tcp-westwood.cc `DupAck`, `NewAck`
    /// against tcp-newreno.cc), and the Westwood one runs ns-3.17's estimator.
    #[test]
    fn the_ns3_17_westwood_transport_differs_from_ns3_17_tcp_only_in_its_recovery() {
        use crate::tcp::config::{FullAckExit, RecoveryEnd, RecoveryEntryCwnd};
        let (reno, ww) = (
            by_name("ns3.17-tcp").unwrap(),
            by_name("ns3.17-westwood").unwrap(),
        );
        let recovery = ["full_ack_exit", "recovery_end", "recovery_entry_cwnd"];
        let strip = |t: &Transport| {
            let mut m = t.tcp_table();
            m.retain(|k, _| !recovery.contains(&k.as_str()));
            m
        };
        assert_eq!(strip(reno), strip(ww));
        let (r, w) = (
            validate_tcp_table(&reno.tcp_table(), "x").unwrap(),
            validate_tcp_table(&ww.tcp_table(), "x").unwrap(),
        );
        assert_eq!(
            (r.full_ack_exit, r.recovery_end, r.recovery_entry_cwnd),
            (
                FullAckExit::Flight,
                RecoveryEnd::Recover,
                RecoveryEntryCwnd::Rfc
            )
        );
        assert_eq!(
            (w.full_ack_exit, w.recovery_end, w.recovery_entry_cwnd),
            (
                FullAckExit::Ssthresh,
                RecoveryEnd::NewAck,
                RecoveryEntryCwnd::Min
            )
        );
        assert_eq!(ww.cc, "westwood+");
        assert_eq!(ww.cc_params_table()["estimator"], "ns3.17");
    }

    #[test]
    fn the_newcwv_papers_transport_is_newreno_newcwv_and_cwnd_per_rtt_pacing() {
        let t = by_name("newcwv-paced").unwrap();
        assert_eq!(t.cc, "newreno");
        let cfg = validate_tcp_table(&t.tcp_table(), "x").unwrap();
        assert_eq!(cfg.idle_restart, IdleRestart::Newcwv);
        assert_eq!(cfg.pacing, PacingMode::CwndPerRtt);
        let base =
            validate_tcp_table(&by_name("newreno-rfc5681").unwrap().tcp_table(), "x").unwrap();
        assert_eq!(base.idle_restart, IdleRestart::Rfc5681);
        assert_eq!(base.pacing, PacingMode::Off);
    }

    #[test]
    fn the_enhancing_transports_differ_only_in_the_papers_mechanisms() {
        let cfg = |n: &str| validate_tcp_table(&by_name(n).unwrap().tcp_table(), n).unwrap();
        let (s, e, t) = (
            cfg("cubic-standard"),
            cfg("cubic-enhanced"),
            cfg("cubic-tlp"),
        );
        assert!(!s.novel_pacing && !s.rtl && !s.tlp);
        assert!(e.novel_pacing && e.rtl && !e.tlp && !e.sack);
        assert!(t.tlp && t.sack && !t.rtl && !t.novel_pacing);
        for c in [&s, &e, &t] {
            assert_eq!(c.idle_restart, IdleRestart::Off);
            // NS-2's defaults (ns-default.tcl; Agent/TCPSink does not delay ACKs)
            assert_eq!((c.mss, c.initial_cwnd, c.timestamps), (1000, 2, false));
            assert_eq!(c.min_rto.0, 200_000_000);
            assert_eq!(c.delayed_ack, crate::tcp::config::DelayedAckMode::Off);
        }
    }
}
