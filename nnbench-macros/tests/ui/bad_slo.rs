#[nnbench::benchmark(slo = "ttft <= 1s")]
fn not_streamed() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream, slo = "wait <= 1s")]
fn no_such_latency() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream, rate = [10], slo = "p99 ttft <= 1s", goodput = 0.9)]
fn no_objective_a_request_meets() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream, slo = "ttft <= 1s", goodput = 0.9)]
fn no_rate() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream, rate = [10], slo = "ttft <= 1s", goodput = 1.5)]
fn more_than_all() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream, rate = [10], slo = "ttft <= 1s", goodput = 0.9, latency_target = "p99 <= 1s")]
fn two_searches() -> Vec<u8> {
    vec![1]
}

fn main() {}
