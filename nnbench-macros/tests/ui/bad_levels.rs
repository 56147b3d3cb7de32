#[nnbench::benchmark(concurrency = [])]
fn no_levels() {}

#[nnbench::benchmark(concurrency = [0, 8])]
fn zero_in_flight() {}

#[nnbench::benchmark(threads = 4)]
fn not_a_list() {}

#[nnbench::benchmark(threads = [2, 2])]
fn twice() {}

#[nnbench::benchmark(concurrency = [8], threads = [2])]
fn both() {}

#[nnbench::benchmark(threads = [2])]
async fn threads_on_async() {}

#[nnbench::benchmark(concurrency = [2], timing = instructions)]
fn counted() {}

#[nnbench::parametrize([(threads = 1)], threads = [2])]
fn named_like_the_level(threads: usize) -> usize {
    threads
}

fn main() {}
