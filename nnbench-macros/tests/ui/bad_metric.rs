#[nnbench::benchmark(metric = faster)]
fn accuracy() -> f64 {
    0.9
}

#[nnbench::benchmark(metric = "accuracy:up, latency_ms:lower")]
fn direction() -> f64 {
    0.9
}

#[nnbench::benchmark(metric = "eval..top5:higher")]
fn field_name() -> f64 {
    0.9
}

#[nnbench::benchmark(metric = "accuracy:higher", fail_on = "value.accuracy=1%, value.loss=5%")]
fn unjudged_limit() -> f64 {
    0.9
}

#[nnbench::benchmark(metric = higher, fail_on = "value.accuracy=1%")]
fn limit_on_a_number() -> f64 {
    0.9
}

fn main() {}
