//! haslab-delaybox: the propagation delay and random loss of one link direction of the live
//! testbed (docs/live.md), as a userspace NFQUEUE verdict delayer.
//!
//! An iptables rule in a router namespace sends the packets of one direction to NFQUEUE number
//! `--queue`. The kernel keeps each packet; this program receives only its metadata
//! (`NFQNL_COPY_META`), stamps it with `CLOCK_MONOTONIC` and issues the ACCEPT verdict at
//! `stamp + delay`, in FIFO order (a constant delay keeps the order, so nothing is reordered).
//! With probability `--loss` a packet gets the DROP verdict at once instead (Bernoulli loss as
//! the packet enters the link, as the simulator's `LinkDir` does; draws from a xoshiro256++
//! stream seeded by `--seed` and the queue number).
//!
//! Timing: the loop sleeps in `ppoll` with a nanosecond timeout until the next due packet (timer
//! slack 1 ns, normal scheduling priority: a SCHED_FIFO spinner stalls a 2-vCPU VM, as seen on
//! the project's test machine, docs/live.md). The error reported is the *lateness* of each verdict, the time it is issued
//! minus the due time; it does not include the time between the packet entering the queue and
//! this program receiving its metadata, which is why the testbed also measures the RTT with ping.
//!
//! Settings found when the testbed was first probed: queue length 200000 (the default 1024 overflows at
//! 50 ms × 10 kpps), a 64 MiB receive buffer and `NETLINK_NO_ENOBUFS`.
//!
//! Timed loss changes (a scenario's loss events): with `--schedule FILE`, on SIGUSR1 the box
//! (re)reads FILE, lines `MONOTONIC_NS PROBABILITY` in time order; from each line's time on, that
//! probability replaces `--loss` (a line with `-` as the probability goes back to `--loss`). The
//! runner writes the file once the run's clock is known and signals the box; the change is then
//! exact to the packet, not to the runner's polling.
//!
//! On SIGTERM/SIGINT it releases the packets it holds, writes its statistics (JSON) to `--stats`
//! and exits 0. If it is killed, the kernel drops the packets it held when the socket closes.

use nfq::{Queue, Verdict};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Kernel queue length (packets held at once): the probe's value.
const QUEUE_MAXLEN: u32 = 200_000;
/// Receive buffer of the netlink socket (bytes).
const RCVBUF_BYTES: libc::c_int = 64 << 20;
/// At most this many packets are received before the due ones are released again.
const RECV_BATCH: usize = 256;

static STOP: AtomicBool = AtomicBool::new(false);
static RELOAD: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" fn on_reload(_: libc::c_int) {
    RELOAD.store(true, Ordering::SeqCst);
}

/// A loss schedule: (CLOCK_MONOTONIC ns, probability; None = back to the base loss), by time.
fn parse_schedule(text: &str) -> Result<Vec<(u64, Option<f64>)>, String> {
    let mut out: Vec<(u64, Option<f64>)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(t), Some(p), None) = (it.next(), it.next(), it.next()) else {
            return Err(format!("line {}: expected `NS PROBABILITY`", n + 1));
        };
        let t = t
            .parse::<u64>()
            .map_err(|_| format!("line {}: {t:?} is not a time in ns", n + 1))?;
        let p = if p == "-" {
            None
        } else {
            Some(
                p.parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| format!("line {}: {p:?} is not a probability", n + 1))?,
            )
        };
        if out.last().is_some_and(|&(t0, _)| t < t0) {
            return Err(format!("line {}: times must not go back", n + 1));
        }
        out.push((t, p));
    }
    Ok(out)
}

/// The loss probability at `now` under `schedule`, `base` outside it.
fn loss_at(schedule: &[(u64, Option<f64>)], base: f64, now: u64) -> f64 {
    match schedule.iter().rev().find(|(t, _)| *t <= now) {
        Some((_, Some(p))) => *p,
        _ => base,
    }
}

#[derive(Debug, PartialEq)]
struct Args {
    queue: u16,
    delay_ns: u64,
    loss: f64,
    seed: u64,
    stats: Option<PathBuf>,
    schedule: Option<PathBuf>,
}

const USAGE: &str =
    "usage: haslab-delaybox --queue N --delay-us MICROSECONDS [--loss P] [--seed S] [--stats FILE] [--schedule FILE]";

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut queue = None;
    let mut delay_ns = None;
    let mut loss = 0.0;
    let mut seed = 1;
    let mut stats = None;
    let mut schedule = None;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))
        };
        match flag.as_str() {
            "--queue" => {
                let v = value()?;
                queue = Some(
                    v.parse::<u16>()
                        .map_err(|_| format!("--queue {v:?}: expected 0..65535"))?,
                )
            }
            "--delay-us" => {
                let v = value()?;
                let us = v
                    .parse::<u64>()
                    .ok()
                    .filter(|&us| us <= 10_000_000)
                    .ok_or_else(|| format!("--delay-us {v:?}: expected 0..10000000 (µs)"))?;
                delay_ns = Some(us * 1000)
            }
            "--loss" => {
                let v = value()?;
                loss = v
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| format!("--loss {v:?}: expected a probability from 0 to 1"))?
            }
            "--seed" => {
                let v = value()?;
                seed = v
                    .parse::<u64>()
                    .map_err(|_| format!("--seed {v:?}: expected an unsigned integer"))?
            }
            "--stats" => stats = Some(PathBuf::from(value()?)),
            "--schedule" => schedule = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other:?}; {USAGE}")),
        }
    }
    Ok(Args {
        queue: queue.ok_or_else(|| format!("--queue is required; {USAGE}"))?,
        delay_ns: delay_ns.ok_or_else(|| format!("--delay-us is required; {USAGE}"))?,
        loss,
        seed,
        stats,
        schedule,
    })
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The value at quantile `q` (0..=1) of sorted `v` (nearest rank), 0 when empty.
fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[derive(Default)]
struct Stats {
    received: u64,
    forwarded: u64,
    dropped_loss: u64,
    released_at_exit: u64,
    max_held: usize,
    /// lateness of each verdict issued on time or late, ns
    lateness_ns: Vec<u64>,
}

impl Stats {
    fn to_json(&self, args: &Args) -> serde_json::Value {
        let mut l = self.lateness_ns.clone();
        l.sort_unstable();
        let mean = if l.is_empty() {
            0.0
        } else {
            l.iter().map(|&x| x as f64).sum::<f64>() / l.len() as f64
        };
        serde_json::json!({
            "queue": args.queue,
            "delay_ns": args.delay_ns,
            "loss": args.loss,
            "received": self.received,
            "forwarded": self.forwarded,
            "dropped_loss": self.dropped_loss,
            "released_at_exit": self.released_at_exit,
            "max_held": self.max_held,
            "lateness_ns": {
                "samples": l.len(),
                "mean": mean,
                "p50": quantile(&l, 0.5),
                "p90": quantile(&l, 0.9),
                "p99": quantile(&l, 0.99),
                "p999": quantile(&l, 0.999),
                "max": l.last().copied().unwrap_or(0),
            },
        })
    }
}

/// `Queue` does not expose its netlink socket; it opens exactly one socket, which takes the
/// lowest free descriptor. Find that number first and check afterwards that it is a
/// NETLINK_NETFILTER socket.
fn open_queue() -> io::Result<(Queue, libc::c_int)> {
    // SAFETY: plain descriptor calls on a path literal.
    let probe = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
    if probe < 0 {
        return Err(io::Error::last_os_error());
    }
    unsafe { libc::close(probe) };
    let q = Queue::open()?;
    let fd = probe;
    let sockopt = |opt| {
        let mut v: libc::c_int = -1;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt into a c_int of the given length.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &mut v as *mut _ as *mut _,
                &mut len,
            )
        };
        if r < 0 {
            -1
        } else {
            v
        }
    };
    if sockopt(libc::SO_DOMAIN) != libc::AF_NETLINK
        || sockopt(libc::SO_PROTOCOL) != libc::NETLINK_NETFILTER
    {
        return Err(io::Error::other(
            "could not find the NFQUEUE netlink socket's descriptor",
        ));
    }
    Ok((q, fd))
}

fn write_stats(path: &Option<PathBuf>, json: &serde_json::Value) {
    let Some(path) = path else {
        println!("{json}");
        return;
    };
    let tmp = path.with_extension("tmp");
    if std::fs::write(&tmp, format!("{json}\n"))
        .and_then(|_| std::fs::rename(&tmp, path))
        .is_err()
    {
        eprintln!("haslab-delaybox: could not write {}", path.display());
    }
}

fn run(args: &Args) -> io::Result<Stats> {
    let (mut q, fd) = open_queue()?;
    q.bind(args.queue)?;
    q.set_copy_range(args.queue, 0)?;
    q.set_queue_max_len(args.queue, QUEUE_MAXLEN)?;
    q.set_nonblocking(true);
    // SAFETY: setsockopt/prctl with valid arguments.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            &RCVBUF_BYTES as *const _ as *const _,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
    let mut rng =
        Xoshiro256PlusPlus::seed_from_u64(args.seed ^ (0x6861_736c_6162 + args.queue as u64));
    let mut held: VecDeque<(u64, nfq::Message)> = VecDeque::new();
    let mut st = Stats::default();
    eprintln!(
        "haslab-delaybox: queue {} delay {} µs loss {}",
        args.queue,
        args.delay_ns / 1000,
        args.loss
    );
    let mut schedule: Vec<(u64, Option<f64>)> = Vec::new();
    while !STOP.load(Ordering::SeqCst) {
        if RELOAD.swap(false, Ordering::SeqCst) {
            if let Some(path) = &args.schedule {
                match std::fs::read_to_string(path)
                    .map_err(|e| e.to_string())
                    .and_then(|t| parse_schedule(&t))
                {
                    Ok(s) => {
                        eprintln!("haslab-delaybox: loss schedule of {} changes", s.len());
                        schedule = s;
                    }
                    Err(e) => eprintln!("haslab-delaybox: {}: {e}", path.display()),
                }
            }
        }
        // release what is due
        let now = now_ns();
        while held.front().is_some_and(|(due, _)| *due <= now) {
            let (due, msg) = held.pop_front().expect("front exists");
            st.lateness_ns.push(now_ns() - due);
            q.verdict(msg)?;
            st.forwarded += 1;
        }
        // sleep until the next due packet or the next arrival
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let timeout = held.front().map(|(due, _)| {
            let wait = due.saturating_sub(now_ns());
            libc::timespec {
                tv_sec: (wait / 1_000_000_000) as libc::time_t,
                tv_nsec: (wait % 1_000_000_000) as libc::c_long,
            }
        });
        let tp = timeout
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: one valid pollfd, a valid or null timeout, no signal mask change.
        let r = unsafe { libc::ppoll(&mut pfd, 1, tp, std::ptr::null()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            continue;
        }
        for _ in 0..RECV_BATCH {
            match q.recv() {
                Ok(mut msg) => {
                    let t = now_ns();
                    st.received += 1;
                    let loss = loss_at(&schedule, args.loss, t);
                    if loss > 0.0 && rng.random::<f64>() < loss {
                        msg.set_verdict(Verdict::Drop);
                        q.verdict(msg)?;
                        st.dropped_loss += 1;
                    } else {
                        msg.set_verdict(Verdict::Accept);
                        held.push_back((t + args.delay_ns, msg));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => break,
                Err(e) => return Err(e),
            }
        }
        st.max_held = st.max_held.max(held.len());
    }
    while let Some((_, msg)) = held.pop_front() {
        q.verdict(msg)?;
        st.released_at_exit += 1;
    }
    let _ = q.unbind(args.queue);
    Ok(st)
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("haslab-delaybox: {e}");
            std::process::exit(2);
        }
    };
    // SAFETY: installing an async-signal-safe handler (one atomic store), without SA_RESTART so
    // that ppoll returns EINTR.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        let mut su: libc::sigaction = std::mem::zeroed();
        su.sa_sigaction = on_reload as *const () as usize;
        libc::sigemptyset(&mut su.sa_mask);
        libc::sigaction(libc::SIGUSR1, &su, std::ptr::null_mut());
    }
    match run(&args) {
        Ok(st) => write_stats(&args.stats, &st.to_json(&args)),
        Err(e) => {
            eprintln!("haslab-delaybox: queue {}: {e}", args.queue);
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn arguments_are_parsed_and_checked() {
        let a = parse_args(&argv("--queue 3 --delay-us 50000 --loss 0.01 --seed 7")).unwrap();
        assert_eq!((a.queue, a.delay_ns, a.seed), (3, 50_000_000, 7));
        assert_eq!(a.loss, 0.01);
        for bad in [
            "--delay-us 10",
            "--queue 1",
            "--queue 70000 --delay-us 1",
            "--queue 1 --delay-us 1 --loss 1.5",
            "--queue 1 --delay-us -4",
            "--queue 1 --delay-us 5 --what",
        ] {
            let e = parse_args(&argv(bad)).unwrap_err();
            assert!(e.contains("--"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_loss_schedule_switches_the_probability_at_its_times() {
        let s = parse_schedule("# burst\n100 0.5\n200 -\n").unwrap();
        assert_eq!(loss_at(&s, 0.01, 99), 0.01);
        assert_eq!(loss_at(&s, 0.01, 100), 0.5);
        assert_eq!(loss_at(&s, 0.01, 199), 0.5);
        assert_eq!(loss_at(&s, 0.01, 200), 0.01);
        assert!(parse_schedule("100 2.0").is_err());
        assert!(parse_schedule("200 0.1\n100 0.2").is_err());
        assert!(parse_schedule("x 0.1").is_err());
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), 50);
        assert_eq!(quantile(&v, 0.99), 99);
        assert_eq!(quantile(&v, 1.0), 100);
        assert_eq!(quantile(&v, 0.0), 1);
        assert_eq!(quantile(&[], 0.5), 0);
    }
}
