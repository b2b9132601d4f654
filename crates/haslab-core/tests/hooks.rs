//! The hook points later algorithms need, exercised with test doubles: a pacing rate set by
//! the congestion control, a cwnd-validation policy, and application data passed down to the
//! congestion control.

use haslab_core::app::{App, AppApi};
use haslab_core::scenario::plan_from_toml;
use haslab_core::tcp::cc::{AppData, CcState, CongestionControl};
use haslab_core::tcp::cwv::CwndValidation;
use haslab_core::tcp::endpoint::{Notice, NoticeKind};
use haslab_core::world::World;
use haslab_core::RunOptions;
use std::sync::{Arc, Mutex};

const S: u64 = 1_000_000_000;

fn world(app: &str, duration: &str) -> World {
    let text = format!(
        r#"
duration = "{duration}"
[dumbbell]
pairs = 1
bottleneck_rate = "100Mbps"
bottleneck_delay = "20ms"
bottleneck_queue = "1000pkts"
[[flow]]
src = "left0"
dst = "right0"
{app}
"#
    );
    World::new(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap()
}

/// A congestion control with a huge window that paces at a fixed rate.
struct FixedPacer {
    rate_bps: u64,
    seen: Arc<Mutex<Vec<AppData>>>,
}

impl CongestionControl for FixedPacer {
    fn name(&self) -> &'static str {
        "fixed-pacer"
    }
    fn init(&mut self, tp: &mut CcState) {
        tp.cwnd_pkts = 10_000;
        tp.pacing_rate_bps = Some(self.rate_bps);
    }
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        tp.cwnd_pkts
    }
    fn cong_avoid(&mut self, _tp: &mut CcState, _acked: u32) {}
    fn set_app_data(&mut self, _tp: &mut CcState, data: &AppData) {
        self.seen.lock().unwrap().push(data.clone());
    }
}

#[test]
fn the_sender_honours_the_pacing_rate_of_its_congestion_control() {
    let mut w = world("app = \"bulk\"", "20s");
    let seen = Arc::new(Mutex::new(vec![]));
    w.set_congestion_control(
        0,
        0,
        Box::new(FixedPacer {
            rate_bps: 2_000_000,
            seen,
        }),
    );
    let r = w.finish().unwrap();
    let f = &r.flows[0];
    // a 100 Mbps path, a 10 000-packet window: only pacing can hold the rate at 2 Mbps of
    // IP packets (1500 B), i.e. 2 Mbps × 1448/1500 of goodput
    let expected = 2e6 * 1448.0 / 1500.0;
    assert!(
        (f.goodput_bps - expected).abs() / expected < 0.02,
        "goodput {} vs {expected}",
        f.goodput_bps
    );
    let bottleneck = r.links.iter().find(|l| l.name == "r1->r2").unwrap();
    assert_eq!(
        bottleneck.max_queue_packets, 0,
        "paced packets never queue on a faster link"
    );
}

/// An application that passes an encoding ladder to its connection, then sends a chunk.
struct LadderApp {
    conn: u32,
}

impl App for LadderApp {
    fn start(&mut self, api: &mut AppApi) {
        api.set_app_data(
            self.conn,
            0,
            AppData {
                encoding_bitrates_bps: vec![248_000, 456_000, 928_000],
            },
        );
        api.connect(self.conn);
    }
    fn on_notice(&mut self, api: &mut AppApi, n: &Notice) {
        if n.kind == NoticeKind::Connected {
            api.write(self.conn, 0, 100_000, 0);
        }
    }
}

#[test]
fn application_data_reaches_the_congestion_control() {
    let mut w = world("app = \"bulk\"", "5s");
    let seen = Arc::new(Mutex::new(vec![]));
    w.set_congestion_control(
        0,
        0,
        Box::new(FixedPacer {
            rate_bps: 10_000_000,
            seen: seen.clone(),
        }),
    );
    w.set_app(0, Box::new(LadderApp { conn: 0 }));
    let r = w.finish().unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![AppData {
            encoding_bitrates_bps: vec![248_000, 456_000, 928_000]
        }]
    );
    assert_eq!(r.flows[0].transfer.bytes_received, 100_000);
}

/// A validation policy that counts restarts after idle and freezes cwnd.
struct Freeze {
    restarts: Arc<Mutex<Vec<u64>>>,
}

impl CwndValidation for Freeze {
    fn name(&self) -> &'static str {
        "freeze"
    }
    fn on_restart_after_idle(
        &mut self,
        _tp: &mut CcState,
        _cc: &mut dyn CongestionControl,
        idle_ns: u64,
    ) {
        self.restarts.lock().unwrap().push(idle_ns);
    }
    fn allow_cwnd_growth(&self, _tp: &CcState) -> bool {
        false
    }
}

#[test]
fn a_cwnd_validation_policy_sees_idle_restarts_and_can_freeze_cwnd() {
    let mut w = world(
        "app = \"chunks\"\nchunk = \"200KB\"\ninterval = \"1s\"",
        "10.5s",
    );
    let restarts = Arc::new(Mutex::new(vec![]));
    w.set_cwnd_validation(
        0,
        0,
        Box::new(Freeze {
            restarts: restarts.clone(),
        }),
    );
    let r = w.finish().unwrap();
    let f = &r.flows[0];
    assert_eq!(
        f.final_cwnd_pkts, 10,
        "cwnd grew although the policy froze it"
    );
    let idle = restarts.lock().unwrap().clone();
    // a chunk each second after the handshake; each one after the first starts after idle
    let chunks = (f.transfer.bytes_written / 200_000) as usize;
    assert_eq!(chunks, 11);
    assert_eq!(idle.len(), chunks - 1, "{idle:?}");
    // 200 kB at a frozen window of 10 packets per ~40 ms RTT takes ~0.6 s: idle ≈ 0.4 s
    assert!(idle.iter().all(|&t| t > S / 10 && t < S), "{idle:?}");
}

/// Writes `bytes`, then closes its direction.
struct WriteThenClose {
    conn: u32,
    bytes: u64,
}

impl App for WriteThenClose {
    fn start(&mut self, api: &mut AppApi) {
        api.connect(self.conn);
    }
    fn on_notice(&mut self, api: &mut AppApi, n: &Notice) {
        if n.kind == NoticeKind::Connected {
            api.write(self.conn, 0, self.bytes, 7);
            api.close(self.conn, 0);
        }
    }
}

#[test]
fn close_sends_a_fin_after_the_data_even_under_loss() {
    for seed in 1..20u64 {
        let text = format!(
            r#"
seed = {seed}
duration = "60s"
[dumbbell]
pairs = 1
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
bottleneck_loss = "5%"
[[flow]]
src = "left0"
dst = "right0"
app = "bulk"
"#
        );
        let mut w = World::new(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
        w.set_app(
            0,
            Box::new(WriteThenClose {
                conn: 0,
                bytes: 50_000,
            }),
        );
        w.run_until(60 * S);
        assert!(
            w.endpoint(0, 1).peer_closed(),
            "seed {seed}: the FIN never arrived in order"
        );
        assert_eq!(
            w.endpoint(0, 1).stats.transfer.bytes_received,
            50_000,
            "the FIN must not count as data"
        );
        assert_eq!(
            w.endpoint(0, 0).in_flight_pkts(),
            0,
            "seed {seed}: the FIN was never acknowledged"
        );
        assert_eq!(w.endpoint(0, 0).unacked_written_bytes(), 0);
    }
}

/// A Trickle-like server: clamps its cwnd to a rate, then sends a large response.
struct ClampingApp {
    conn: u32,
    rate_bps: u64,
}

impl App for ClampingApp {
    fn start(&mut self, api: &mut AppApi) {
        api.connect(self.conn);
    }
    fn on_notice(&mut self, api: &mut AppApi, n: &Notice) {
        if n.kind == NoticeKind::Connected {
            api.set_cwnd_clamp_rate(self.conn, 0, Some(self.rate_bps));
            api.write(self.conn, 0, 50_000_000, 0);
        }
    }
}

#[test]
fn an_application_can_clamp_cwnd_to_a_rate() {
    // on a 100 Mbps path, a 4 Mbps clamp keeps the flow near 4 Mbps
    let mut w = world("app = \"bulk\"", "20s");
    w.set_app(
        0,
        Box::new(ClampingApp {
            conn: 0,
            rate_bps: 4_000_000,
        }),
    );
    let r = w.finish().unwrap();
    let g = r.flows[0].goodput_bps;
    assert!(
        (3.0e6..4.2e6).contains(&g),
        "goodput {g} with a 4 Mbps clamp"
    );
}
