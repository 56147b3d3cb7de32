#[nnbench::benchmark(timing = often, sample_size = 5, warm_up_time = "3 parsecs", measurement_time = "0s")]
fn startup() {}

fn main() {}
