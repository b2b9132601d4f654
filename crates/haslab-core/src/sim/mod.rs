//! Discrete-event machinery: time, the event list, timers and random streams.
pub mod events;
pub mod rng;
pub mod time;
