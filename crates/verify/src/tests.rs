//! Detection unit tests: planted damage gives the right `What` at the right interval.
