#[nnbench::product(batch = [1, 2], bacth = [3])]
fn latency(batch: usize) -> usize {
    batch
}

fn main() {}
