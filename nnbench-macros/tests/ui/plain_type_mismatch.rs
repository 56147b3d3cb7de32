#[nnbench::product(batch = ["large"])]
fn latency(batch: usize) -> usize {
    batch
}

fn main() {}
