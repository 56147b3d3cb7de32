#[nnbench::benchmark(timing = often, sample_size = 5, warm_up = "3 parsecs", measurement_time = "0s")]
fn startup() {}

fn main() {}
