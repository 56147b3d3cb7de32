#[nnbench::benchmark(stream)]
fn no_tokens() {}

#[nnbench::benchmark(stream, threads = [2])]
fn on_threads() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream = "yes")]
fn not_a_flag() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream, stream)]
fn twice() -> Vec<u8> {
    vec![1]
}

#[nnbench::benchmark(stream)]
fn a_number() -> u64 {
    1
}

fn main() {}
