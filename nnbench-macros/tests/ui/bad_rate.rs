#[nnbench::benchmark(rate = [])]
fn no_rates() {}

#[nnbench::benchmark(rate = [0, 100])]
fn zero_a_second() {}

#[nnbench::benchmark(rate = [100.5, 100.5])]
fn twice() {}

#[nnbench::benchmark(rate = 100)]
fn not_a_list() {}

#[nnbench::benchmark(rate = [100], concurrency = [8])]
fn with_concurrency() {}

#[nnbench::benchmark(arrivals = uniform)]
fn arrivals_without_rate() {}

#[nnbench::benchmark(request_timeout = "50ms", concurrency = [4])]
fn timeout_without_rate() {}

#[nnbench::benchmark(rate = [100], arrivals = bursty)]
fn unknown_arrivals() {}

#[nnbench::benchmark(rate = [100], arrivals = gamma(0))]
fn gamma_without_spread() {}

#[nnbench::benchmark(rate = [100], arrivals = gamma(burst))]
fn gamma_of_a_word() {}

#[nnbench::benchmark(rate = [100], request_timeout = "soon")]
fn bad_timeout() {}

#[nnbench::parametrize([(rate = 1)], rate = [10])]
fn named_like_the_rate(rate: usize) -> usize {
    rate
}

#[nnbench::benchmark(latency_target = "p99 <= 20ms")]
fn target_without_rate() {}

#[nnbench::benchmark(rate = [100], latency_target = "p95 <= 20ms")]
fn unknown_percentile() {}

fn main() {}
