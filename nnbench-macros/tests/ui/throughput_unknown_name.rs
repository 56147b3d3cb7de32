#[nnbench::product(batch = [1usize, 2], throughput = elements(batches))]
fn misspelt(batch: usize) -> usize {
    batch
}

fn main() {}
