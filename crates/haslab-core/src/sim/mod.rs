//! Discrete-event machinery: time, the event list, timers and random streams; and the
//! vocabulary every layer shares: [`units`] (human units and their limits) and [`fields`] (what a config struct accepts).
pub mod events;
pub mod fields;
pub mod registry;
pub mod rng;
pub mod time;
pub mod units;
