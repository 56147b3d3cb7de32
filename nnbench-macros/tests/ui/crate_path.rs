#[nnbench::benchmark(crate = not_nnbench)]
fn startup() {}

#[nnbench::benchmark(crate = ::nnbench, crate = ::nnbench, timing = "often")]
fn twice() {}

fn main() {}
