#[nnbench::product(m = [64usize, 128], n = [64usize], flops = 2 * m * nn)]
fn misspelt(m: usize, n: usize) -> usize {
    m * n
}

fn main() {}
