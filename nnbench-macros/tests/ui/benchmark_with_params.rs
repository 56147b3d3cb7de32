#[nnbench::benchmark]
fn startup(threads: usize) -> usize {
    threads
}

fn main() {}
