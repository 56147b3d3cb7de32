#[nnbench::product(batch = [1, 2])]
fn latency(batch: usize, width: usize) -> usize {
    batch * width
}

fn main() {}
