// `warm_up`, the option's name before 0.1.0, still compiles, with a
// warning (an error here) that names the new one.
#![deny(deprecated)]

#[nnbench::benchmark(timing = sampled, warm_up = "10ms")]
fn warmed() {}

fn main() {}
